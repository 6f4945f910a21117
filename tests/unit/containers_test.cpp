// Containers and PID namespaces as the host sees them: cgroup names of each
// runtime, the names runtimes write down, NSpid lines, and the policy's
// `container` key.
#include <gtest/gtest.h>

#include <string>

#include "base/pid_namespaces.h"
#include "kernel/engine_refs.h"
#include "liveguard/abi.h"
#include "policy/containers.h"
#include "policy/policy.h"

using namespace liveguard;

namespace {
const std::string kId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
std::string id_of_other() { return std::string(64, 'f'); }
}

TEST(NsPid, ReadsEveryLevelOutermostFirst) {
    auto ids = parse_nspid("Name:\tsleep\nTgid:\t157\nNSpid:\t157\t9\nNSpgid:\t157\t9\n");
    ASSERT_TRUE(ids);
    EXPECT_EQ(*ids, (std::vector<pid_t>{157, 9}));
    EXPECT_EQ(*parse_nspid("NSpid:\t42\n"), std::vector<pid_t>{42});
}

TEST(NsPid, MissingOrMalformedLinesAreNothing) {
    EXPECT_FALSE(parse_nspid("Name:\tx\nPid:\t3\n"));
    EXPECT_FALSE(parse_nspid("NSpid:\t\n"));
    EXPECT_FALSE(parse_nspid("NSpid:\t12\tx9\n"));
    EXPECT_FALSE(parse_nspid("XNSpid:\t12\n"));
    EXPECT_FALSE(parse_nspid(""));
}

TEST(ContainerCgroups, EachRuntimesNamingIsRecognised) {
    struct Case {
        const char* parent;
        std::string name;
        const char* runtime;
    } cases[] = {
        {"system.slice", "docker-" + kId + ".scope", "docker"},
        {"docker", kId, "docker"},
        {"machine.slice", "libpod-" + kId + ".scope", "podman"},
        {"user.slice", "libpod-" + kId + ".scope", "podman"},
        {"libpod_parent", "libpod-" + kId, "podman"},
        {"system.slice", "cri-containerd-" + kId + ".scope", "containerd"},
        {"system.slice", "nerdctl-" + kId + ".scope", "nerdctl"},
    };
    for (const auto& c : cases) {
        auto k = container_of_cgroup(c.parent, c.name);
        ASSERT_TRUE(k) << c.name;
        EXPECT_EQ(k->runtime, c.runtime) << c.name;
        EXPECT_EQ(k->id, kId) << c.name;
    }
}

TEST(ContainerCgroups, LookalikesAreNotContainers) {
    EXPECT_FALSE(container_of_cgroup("machine.slice", "libpod-conmon-" + kId + ".scope"));
    EXPECT_FALSE(container_of_cgroup("system.slice", "docker.service"));
    EXPECT_FALSE(container_of_cgroup("system.slice", "docker-" + kId.substr(1) + ".scope"));
    EXPECT_FALSE(container_of_cgroup("system.slice", "docker-" + kId + ".service"));
    std::string upper = kId;
    upper[0] = 'A';
    EXPECT_FALSE(container_of_cgroup("system.slice", "docker-" + upper + ".scope"));
    EXPECT_FALSE(container_of_cgroup("system.slice", kId));  // a bare id outside docker/
    EXPECT_FALSE(container_of_cgroup("docker", "buildkit"));
}

TEST(ContainerNames, MatchedByGlobFullIdOrShortId) {
    Container c;
    c.runtime = "docker";
    c.id = kId;
    c.names = {"hermes"};
    EXPECT_TRUE(container_matches(c, "hermes"));
    EXPECT_TRUE(container_matches(c, "herm*"));
    EXPECT_TRUE(container_matches(c, kId));
    EXPECT_TRUE(container_matches(c, kId.substr(0, 12)));
    EXPECT_FALSE(container_matches(c, kId.substr(0, 11)));  // too short to be an id
    EXPECT_FALSE(container_matches(c, "hermes-2"));
    EXPECT_FALSE(container_matches(c, "fedcba987654"));
    EXPECT_EQ(describe(c), "docker hermes (0123456789ab)");
}

TEST(ContainerNames, ReadFromWhatTheRuntimesWrite) {
    EXPECT_EQ(docker_config_name(R"({"ID":")" + kId + R"(","Name":"/hermes","Config":{"Labels":{"a":"b"}}})"),
              "hermes");
    EXPECT_FALSE(docker_config_name(R"({"ID":"x"})"));
    EXPECT_FALSE(docker_config_name(R"({"Name":"/"})"));
    EXPECT_FALSE(docker_config_name("not json"));
    std::string env = "engine=\"podman-5.4.2\"\nname=\"hermes\"\nid=\"" + kId + "\"\nimage=\"x\"\nrootless=1\n";
    EXPECT_EQ(containerenv_field(env, "name"), "hermes");
    EXPECT_EQ(containerenv_field(env, "id"), kId);
    EXPECT_EQ(containerenv_field(env, "rootless"), "1");
    EXPECT_FALSE(containerenv_field(env, "nam"));
    EXPECT_FALSE(containerenv_field("name=\"\"\n", "name"));
    using namespace std::string_literals;
    std::string conmon = "/usr/bin/conmon\0--api-version\0" "1\0-c\0"s + kId + "\0-u\0"s + kId +
                         "\0-r\0/usr/bin/crun\0-n\0lg-pod\0--exit-dir\0/run/libpod/exits"s;
    EXPECT_EQ(conmon_container_name(conmon, kId), "lg-pod");
    EXPECT_FALSE(conmon_container_name(conmon, id_of_other()));
    EXPECT_FALSE(conmon_container_name("/usr/bin/conmon\0-c\0"s + kId, kId));
}

TEST(ContainerPolicy, AloneItIsATargetWithAFileKindItScopesIt) {
    auto p = parse_policy("[[protect]]\ncontainer = \"hermes*\"\n"
                          "[[protect]]\ns6 = \"/run/service/gateway-*\"\ncontainer = \"hermes\"\n"
                          "[[protect]]\ncontainer = \"hermes\"\npidfile = \"/opt/data/gateway.pid\"\n",
                          "p.toml");
    ASSERT_EQ(p.targets.size(), 3u);
    EXPECT_EQ(p.targets[0].kind, TargetKind::Container);
    EXPECT_EQ(p.targets[0].pattern, "hermes*");
    EXPECT_TRUE(p.targets[0].container.empty());
    EXPECT_EQ(p.targets[0].describe(), "container \"hermes*\"");
    EXPECT_EQ(p.targets[1].kind, TargetKind::S6);
    EXPECT_EQ(p.targets[1].container, "hermes");
    EXPECT_EQ(p.targets[1].describe(), "s6 \"/run/service/gateway-*\" in container \"hermes\"");
    EXPECT_EQ(p.targets[2].kind, TargetKind::PidFile);
    EXPECT_EQ(p.targets[2].container, "hermes");
}

TEST(ContainerPolicy, BadUsesSayWhatIsWrong) {
    auto error_of = [](const std::string& text) {
        try {
            parse_policy(text, "p.toml");
        } catch (const PolicyError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error_of("[[protect]]\ncontainer = \"\"\n").find("`container` must be"), std::string::npos);
    EXPECT_NE(error_of("[[protect]]\ncontainer = \"a/b\"\n").find("`container` must be"), std::string::npos);
    EXPECT_NE(error_of("[[protect]]\ncontainer = 3\n").find("`container` must be"), std::string::npos);
    EXPECT_NE(error_of("[[protect]]\ncontainer = \"h\"\nsystemd_unit = \"x.service\"\n").find("not systemd_unit"),
              std::string::npos);
    EXPECT_NE(error_of("[[protect]]\ncontainer = \"h\"\npid = 3\n").find("not pid"), std::string::npos);
    EXPECT_NE(error_of("[[protect]]\ncontainer = \"h\"\npath = \"/a\"\ns6 = \"/b\"\n").find("exactly one"),
              std::string::npos);
}

TEST(EngineRefs, NamesIdAndEveryPrefix) {
    std::string id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    auto refs = liveguard::engine_refs(id, {"hermes", std::string(80, 'n')});
    EXPECT_TRUE(refs.count("hermes"));
    EXPECT_TRUE(refs.count(id));
    EXPECT_TRUE(refs.count("0"));
    EXPECT_TRUE(refs.count("012"));
    EXPECT_TRUE(refs.count(id.substr(0, 12)));
    // Cut to the key, as the kernel side reads it.
    EXPECT_TRUE(refs.count(std::string(LG_ENGINE_REF_LEN, 'n')));
    EXPECT_EQ(refs.size(), 2u + 64u);
}
