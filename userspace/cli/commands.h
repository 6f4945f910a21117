#pragma once
// What each subcommand does once parsed: one overload per options type,
// which execute() picks by the type the parser chose.
#include "cli/cli.h"

namespace liveguard {

int run_command(const LoadOptions& o);         // cmd_load.cpp
int run_command(const CheckConfigOptions& o);  // cmd_load.cpp
int run_command(const ReloadOptions& o);       // cmd_load.cpp
int run_command(const UnloadOptions& o);       // cmd_load.cpp
int run_command(const ProtectOptions& o);      // cmd_protect.cpp
int run_command(const TagOptions& o);          // cmd_protect.cpp
int run_command(const RunOptions& o);          // cmd_run.cpp
int run_command(const StatusOptions& o);       // cmd_status.cpp
int run_command(const MetricsOptions& o);      // cmd_status.cpp
int run_command(const EventsOptions& o);       // cmd_events.cpp
int run_command(const DoctorOptions& o);       // cmd_doctor.cpp

}  // namespace liveguard
