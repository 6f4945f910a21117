#pragma once
// Errors that carry their cause and what the user should do next. Every
// failure the CLI reports comes through here, so messages stay uniform.
#include <stdexcept>
#include <string>

namespace liveguard {

class Error : public std::runtime_error {
public:
    // `what`: what failed, with its cause. `hint`: the next step, may be empty.
    Error(std::string what, std::string hint = {}, int exit_code = 1)
        : std::runtime_error(std::move(what)), hint_(std::move(hint)), exit_code_(exit_code) {}

    const std::string& hint() const { return hint_; }
    int exit_code() const { return exit_code_; }

private:
    std::string hint_;
    int exit_code_;
};

// "what: strerror(err)" for a failed system call.
std::string errno_message(const std::string& what, int err);

// Throws Error for a failed system call, keeping errno's text.
[[noreturn]] void throw_errno(const std::string& what, int err, std::string hint = {});

}  // namespace liveguard
