// The STATUS line the watcher gives systemd.
#include <gtest/gtest.h>

#include <string>

#include "service/service_manager.h"

using namespace liveguard;

TEST(ServiceStatus, OneLineCutBetweenCharacters) {
    EXPECT_EQ(status_line("a\nb\tc"), "a b c");
    // "é" is two bytes: a cut inside it moves before it.
    EXPECT_EQ(status_line("ab\xc3\xa9", 3), "ab");
    EXPECT_EQ(status_line("ab\xc3\xa9", 4), "ab\xc3\xa9");
    EXPECT_EQ(status_line(std::string(300, 'x')).size(), 200u);
}
