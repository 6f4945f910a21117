// Attach errors named for a user: the kernel's ENOTSUPP (524), which
// strerror() cannot name, and what it and EPERM say about the machine.
#include <gtest/gtest.h>

#include <cerrno>

#include "kernel/attach_errors.h"

namespace {

using namespace liveguard;

TEST(AttachErrors, TheKernelsEnotsuppHasAName) {
    EXPECT_EQ(attach_error_name(kKernelEnotsupp).find("Unknown"), std::string::npos);
    EXPECT_NE(attach_error_name(kKernelEnotsupp).find("ENOTSUPP"), std::string::npos);
    EXPECT_EQ(attach_error_name(ENOENT), "No such file or directory");
}

TEST(AttachErrors, RefusalsThatSayWhyTheMachineCannotEnforce) {
    EXPECT_NE(attach_error_reason(EPERM).find("trampoline"), std::string::npos);
    EXPECT_NE(attach_error_reason(kKernelEnotsupp).find("trampolines"), std::string::npos);
    EXPECT_EQ(attach_error_reason(ENOENT), "");
}

}  // namespace
