// Services in containers, on the real kernel: a container made the way the
// runtimes make one (its own PID, mount and UTS namespaces, a cgroup named
// as Docker's or Podman's), s6-svscan as its PID 1 supervising a stand-in
// gateway that writes its Hermes PID file into a volume the host sees.
// Every number the container writes is a pid of its own namespace; a host
// process that happens to carry the same number is the test's decoy.
// ContainerGuard.* tests assert refusals and are part of the control run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "base/pid_namespaces.h"
#include "base/proc.h"
#include "harness.h"
#include "policy/pidfile.h"
#include "policy/s6_status.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = test_root() + "/lgcontainer";

std::string id_of(char c) { return std::string(64, c); }

// Forks; the child enters `pid`'s PID namespace and forks again, so that
// the next process of that namespace gets `next`.
void set_next_ns_pid(pid_t pid, pid_t next) {
    pid_t child = ::fork();
    if (child == 0) {
        int ns = ::open(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), O_RDONLY | O_CLOEXEC);
        if (ns < 0 || ::setns(ns, CLONE_NEWPID) != 0) ::_exit(1);
        pid_t inner = ::fork();
        if (inner == 0) {
            int fd = ::open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
            std::string v = std::to_string(next - 1);
            ::_exit(fd >= 0 && ::write(fd, v.data(), v.size()) == static_cast<ssize_t>(v.size()) ? 0 : 1);
        }
        int st = 0;
        ::waitpid(inner, &st, 0);
        ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    int st = 0;
    ::waitpid(child, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "cannot set the next pid of " << pid << "'s namespace";
}

// A container: `cgroup` (made here, under the cgroup mount), a volume
// directory on the host, and inside, s6-svscan on /run/service with one
// service, gateway-default, whose run script writes the gateway's Hermes
// PID file into the volume and becomes the gateway.
class Container {
public:
    struct Options {
        std::string cgroup;      // relative to the cgroup mount
        std::string volume;      // host directory, the same path inside
        std::string podman_name; // writes /run/.containerenv as Podman does
        std::string id;
        pid_t gateway_ns_pid = 0;  // the gateway's first pid in the namespace
    };
    explicit Container(Options o) : o_(std::move(o)), cgroup_(cgroup_root() + "/" + o_.cgroup) { start(); }
    ~Container() { stop(); }
    Container(const Container&) = delete;
    Container& operator=(const Container&) = delete;

    pid_t init() const { return init_; }
    const std::string& cgroup() const { return cgroup_; }
    std::string service_dir() const { return "/proc/" + std::to_string(init_) + "/root/run/service/gateway-default"; }
    std::string pid_file() const { return o_.volume + "/gateway.pid"; }

    // The gateway as s6 reports it: its pid inside, and the host's number.
    struct Gateway {
        pid_t ns_pid = 0;
        pid_t host_pid = 0;
        std::uint64_t start = 0;
    };
    std::optional<Gateway> gateway() const {
        auto bytes = read_file(service_dir() + "/supervise/status");
        if (!bytes) return std::nullopt;
        auto st = liveguard::parse_s6_status(*bytes);
        if (!st || !st->pid) return std::nullopt;
        auto procs = read_file(cgroup_ + "/cgroup.procs").value_or("");
        std::size_t at = 0;
        while (at < procs.size()) {
            auto end = procs.find('\n', at);
            if (end == std::string::npos) end = procs.size();
            auto pid = liveguard::parse_pid(procs.substr(at, end - at));
            at = end + 1;
            if (!pid || liveguard::inner_pid(*pid) != *st->pid) continue;
            // The PID file is written by the run script before it becomes
            // the gateway: until then it is not the gateway's.
            auto rec = read_file(pid_file());
            if (!rec) return std::nullopt;
            auto parsed = liveguard::parse_pid_file(*rec);
            auto* r = std::get_if<liveguard::PidFileRecord>(&parsed);
            auto stat = liveguard::read_proc_stat(*pid);
            if (!r || r->pid != *st->pid || !stat || stat->comm != "sleep") return std::nullopt;
            return Gateway{*st->pid, *pid, stat->start_ticks};
        }
        return std::nullopt;
    }
    // Waits for a gateway other than `old` (by host pid) to run.
    Gateway wait_gateway(pid_t old = 0) const {
        std::optional<Gateway> g;
        EXPECT_TRUE(wait_until([&] { return (g = gateway()) && g->host_pid != old; }, 20000))
            << "no gateway came up in " << cgroup_;
        return g.value_or(Gateway{});
    }
    // Asks s6 (from the host, outside any session) to restart the gateway,
    // whose next pid inside is `next_ns_pid` when given.
    void restart_gateway(pid_t next_ns_pid = 0) {
        if (next_ns_pid > 0) set_next_ns_pid(init_, next_ns_pid);
        auto r = run_cmd({"s6-svc", "-k", service_dir()});
        ASSERT_EQ(r.status, 0) << r.err;
    }

    // Removes it (its PID 1 killed from the host ends every process in
    // its namespace) and creates it again under the same cgroup name: a
    // new cgroup, new processes, as `docker rm -f` then `docker run` are.
    void recreate() {
        stop();
        start();
    }

private:
    void start() {
        fs::create_directories(cgroup_);
        fs::create_directories(o_.volume);
        ::unlink(pid_file().c_str());
        int fds[2];
        ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
        std::string procs = cgroup_ + "/cgroup.procs";
        std::string root_procs = cgroup_root() + "/cgroup.procs";
        std::string run =
            "#!/bin/sh\n"
            "set -- $(cat /proc/$$/stat)\n"
            "rm -f " + pid_file() + "\n"
            "set -C\n"
            "echo \"{\\\"pid\\\": $$, \\\"kind\\\": \\\"hermes-gateway\\\", \\\"start_time\\\": ${22}}\" > " +
            pid_file() + "\n"
            "exec sleep 3600\n";
        std::string env = o_.podman_name.empty()
                              ? std::string()
                              : "engine=\"podman-5.4.2\"\nname=\"" + o_.podman_name + "\"\nid=\"" + o_.id + "\"\n";
        pid_t next = o_.gateway_ns_pid;
        launcher_ = ::fork();
        if (launcher_ == 0) {
            ::close(fds[0]);
            auto put = [](const std::string& path, const std::string& text) {
                int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
                bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
                if (fd >= 0) ::close(fd);
                return ok;
            };
            if (!put(procs, "0") || ::unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS) != 0) ::_exit(1);
            pid_t init = ::fork();
            if (init == 0) {
                // PID 1 of the container.
                ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
                if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0 ||
                    ::mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") != 0)
                    ::_exit(2);
                ::sethostname("lg-hermes", 9);
                ::mkdir("/run/service", 0755);
                ::mkdir("/run/service/gateway-default", 0755);
                if (!put("/run/service/gateway-default/run", run)) ::_exit(3);
                if (!env.empty() && !put("/run/.containerenv", env)) ::_exit(3);
                // s6-svscan forks s6-supervise, which forks the gateway.
                if (next > 2) {
                    int fd = ::open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
                    std::string v = std::to_string(next - 2);
                    if (fd < 0 || ::write(fd, v.data(), v.size()) != static_cast<ssize_t>(v.size())) ::_exit(4);
                    ::close(fd);
                }
                ::setsid();
                int null = ::open("/dev/null", O_RDWR);
                ::dup2(null, 0);
                ::dup2(null, 1);
                ::dup2(null, 2);
                ::execlp("s6-svscan", "s6-svscan", "/run/service", nullptr);
                ::_exit(127);
            }
            // The launcher is the runtime, not the container.
            put(root_procs, "0");
            (void)!::write(fds[1], &init, sizeof init);
            int st = 0;
            ::waitpid(init, &st, 0);
            ::_exit(0);
        }
        ::close(fds[1]);
        pid_t init = 0;
        bool got = ::read(fds[0], &init, sizeof init) == static_cast<ssize_t>(sizeof init);
        ::close(fds[0]);
        ASSERT_TRUE(got && init > 0) << "the container did not start";
        init_ = init;
    }

    void stop() {
        if (launcher_ <= 0) return;
        ::kill(init_, SIGKILL);
        ::waitpid(launcher_, nullptr, 0);
        launcher_ = 0;
        // Its processes are gone once the cgroup is empty.
        wait_until([&] { return read_file(cgroup_ + "/cgroup.procs").value_or("").empty(); }, 10000);
        ::rmdir(cgroup_.c_str());
    }

    Options o_;
    std::string cgroup_;
    pid_t launcher_ = 0;
    pid_t init_ = 0;
};

// Alive and the same process: no signal ended it.
bool still_runs(const Container::Gateway& g) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto st = liveguard::read_proc_stat(g.host_pid);
    return st && st->start_ticks == g.start && st->state != 'Z';
}

class ContainerFixture : public ::testing::Test {
protected:
    void SetUp() override {
        lg({"unload"});
        ::unlink("/run/liveguard/watcher.log");
        fs::remove_all(kRoot);
        fs::create_directories(kRoot);
    }
    void TearDown() override { lg({"unload"}); }

    std::string policy_path() const { return kRoot + "/policy.toml"; }
    void load_policy(const std::string& policy) {
        write_text(policy_path(), policy);
        auto r = lg({"load", "--config", policy_path()});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
        sabotage_if_control();
    }
    // The watcher reads the policy again; the guard stays loaded.
    void reload_policy(const std::string& policy) {
        write_text(policy_path(), policy);
        auto r = lg({"reload"});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
    }
    std::string watcher_log() { return read_file("/run/liveguard/watcher.log").value_or(""); }

    // A session member's kill -TERM and kill -9 of the gateway are refused
    // and it runs on.
    void expect_refused(Session& s, const Container::Gateway& g, const std::string& what) {
        EXPECT_EQ(s.as_member([&] { return sys_kill(g.host_pid, SIGTERM); }), EPERM) << what;
        EXPECT_EQ(s.as_member([&] { return sys_kill(g.host_pid, SIGKILL); }), EPERM) << what;
        EXPECT_TRUE(still_runs(g)) << what << ": the gateway (host pid " << g.host_pid << ") was killed";
    }
};

class ContainerGuard : public ContainerFixture {};

}  // namespace

// A Docker-named container: its PID file (read from the volume on the
// host) and its s6 directory (through its PID 1's root) name the gateway
// by its pid inside; the guard protects the host's process of that
// number-in-namespace, across an s6 restart, and never the host's decoy
// that carries the same number.
TEST_F(ContainerGuard, PidFileAndS6StatusWrittenInsideNameTheGatewayNotTheHostsNumber) {
    Target decoy({.name = "lg-decoy"});
    Container c({.cgroup = "system.slice/docker-" + id_of('a') + ".scope",
                 .volume = kRoot + "/volume",
                 .id = id_of('a'),
                 .gateway_ns_pid = decoy.pid()});
    auto g = c.wait_gateway();
    ASSERT_EQ(g.ns_pid, decoy.pid()) << "the gateway's pid inside should be the decoy's on the host";
    ASSERT_NE(g.host_pid, decoy.pid());

    load_policy("[[protect]]\npidfile = \"" + c.pid_file() + "\"\n");
    ASSERT_TRUE(wait_until([&] { return listed_protected(g.host_pid); })) << watcher_log();
    EXPECT_FALSE(listed_protected(decoy.pid()));
    // (In the control run status says, rightly, that nothing is loaded.)
    auto status = lg({"status"});
    if (!sabotaged()) {
        EXPECT_NE(status.out.find(std::to_string(g.host_pid) + " (" + std::to_string(g.ns_pid) + " in its namespace)"),
                  std::string::npos)
            << status.out;
    }
    Session s;
    expect_refused(s, g, "pid file");

    // s6 restarts it (asked from the host, outside any session): the new
    // record names the new process.
    c.restart_gateway();
    auto g2 = c.wait_gateway(g.host_pid);
    ASSERT_TRUE(wait_until([&] { return listed_protected(g2.host_pid); })) << watcher_log();
    expect_refused(s, g2, "pid file after an s6 restart");

    // The s6 directory as the host reaches it, in a container created anew
    // (its gateway again numbered as the decoy): nothing but the s6
    // target protects the new gateway.
    c.recreate();
    reload_policy("[[protect]]\ns6 = \"" + c.service_dir() + "\"\n");
    auto g3 = c.wait_gateway();
    ASSERT_EQ(g3.ns_pid, decoy.pid());
    ASSERT_TRUE(wait_until([&] { return listed_protected(g3.host_pid); })) << watcher_log();
    status = lg({"status"});
    if (!sabotaged()) {
        EXPECT_NE(status.out.find(std::to_string(g3.host_pid) + " (" + std::to_string(g3.ns_pid) +
                                  " in its namespace)"),
                  std::string::npos)
            << status.out;
    }
    EXPECT_FALSE(listed_protected(decoy.pid()));
    expect_refused(s, g3, "s6 status");
    c.restart_gateway();
    auto g4 = c.wait_gateway(g3.host_pid);
    ASSERT_TRUE(wait_until([&] { return listed_protected(g4.host_pid); })) << watcher_log();
    expect_refused(s, g4, "s6 status after an s6 restart");

    // Outside any session the same kill is delivered, and s6 starts the next.
    ASSERT_EQ(sys_kill(g4.host_pid, SIGKILL), 0);
    c.wait_gateway(g4.host_pid);
    // The decoy is no one's: the session may end it.
    EXPECT_EQ(s.as_member([&] { return sys_kill(decoy.pid(), SIGKILL); }), 0);
    EXPECT_TRUE(decoy.wait_killed());
}

// A `container` target: the container by its id (Docker's naming) and by
// its name (Podman's, read from the .containerenv Podman writes), each
// protected from its first process on and again once re-created; a
// pidfile and s6 target written as the container sees them, scoped to it.
TEST_F(ContainerGuard, ContainersByIdAndNameAcrossRecreation) {
    Container docker({.cgroup = "system.slice/docker-" + id_of('b') + ".scope",
                      .volume = kRoot + "/docker-volume",
                      .id = id_of('b')});
    Container podman({.cgroup = "machine.slice/libpod-" + id_of('c') + ".scope",
                      .volume = kRoot + "/podman-volume",
                      .podman_name = "lg-hermes",
                      .id = id_of('c')});
    auto d = docker.wait_gateway();
    auto p = podman.wait_gateway();
    load_policy("[[protect]]\ncontainer = \"" + id_of('b').substr(0, 12) + "\"\n"
                "[[protect]]\ncontainer = \"lg-herm*\"\n");
    ASSERT_TRUE(wait_until([&] { return cgroup_protected(docker.cgroup()) && cgroup_protected(podman.cgroup()); }))
        << watcher_log();
    auto status = lg({"status"}).out;
    if (!sabotaged()) {
        EXPECT_NE(status.find("podman lg-hermes (cccccccccccc)"), std::string::npos) << status;
        EXPECT_NE(status.find("docker container (bbbbbbbbbbbb)"), std::string::npos) << status;
    }
    Session s;
    expect_refused(s, d, "docker container by id");
    expect_refused(s, p, "podman container by name");
    // Its PID 1, s6-svscan, is the container's as much as the gateway.
    EXPECT_EQ(s.as_member([&] { return sys_kill(docker.init(), SIGKILL); }), EPERM);

    docker.recreate();
    podman.recreate();
    ASSERT_TRUE(wait_until([&] { return cgroup_protected(docker.cgroup()) && cgroup_protected(podman.cgroup()); }))
        << watcher_log();
    d = docker.wait_gateway();
    p = podman.wait_gateway();
    expect_refused(s, d, "docker container by id, re-created");
    expect_refused(s, p, "podman container by name, re-created");

    // Paths as the container sees them, in the container by name.
    reload_policy("[[protect]]\ns6 = \"/run/service/gateway-*\"\ncontainer = \"lg-hermes\"\n");
    ASSERT_TRUE(wait_until([&] { return !cgroup_protected(podman.cgroup()); })) << watcher_log();
    podman.restart_gateway();
    auto p2 = podman.wait_gateway(p.host_pid);
    ASSERT_TRUE(wait_until([&] { return listed_protected(p2.host_pid); })) << watcher_log();
    expect_refused(s, p2, "s6 in the container by name");
    // The other container is no longer named: its gateway is the session's to end.
    ASSERT_TRUE(wait_until([&] { return !cgroup_protected(docker.cgroup()); }));
    EXPECT_EQ(s.as_member([&] { return sys_kill(d.host_pid, SIGKILL); }), 0);
}

namespace {

// Debian's podman, as root, running containers from a directory (no
// registry, no image): its own storage and state under the test's root,
// the cgroupfs manager (no systemd runs in the VM), no network.
class Podman {
public:
    Podman() : base_(kRoot + "/podman") {
        fs::create_directories(base_ + "/rootfs/bin");
        fs::copy_file("/bin/busybox", base_ + "/rootfs/bin/busybox", fs::copy_options::overwrite_existing);
        for (const char* tool : {"sh", "sleep", "echo"}) {
            std::error_code ec;
            fs::create_symlink("busybox", base_ + "/rootfs/bin/" + tool, ec);
        }
    }
    std::vector<std::string> argv(std::initializer_list<std::string> args) const {
        std::vector<std::string> out = {"podman",          "--root",          base_ + "/storage", "--runroot",
                                        base_ + "/state",  "--cgroup-manager", "cgroupfs",        "--events-backend",
                                        "file",            "--storage-driver", "vfs"};
        out.insert(out.end(), args);
        return out;
    }
    // `podman run -d` of a sleeping container; its id.
    std::string run_sleeping(const std::string& name) const {
        auto r = run_cmd(argv({"run", "-d", "--name", name, "--network", "none", "--rootfs", rootfs(), "sleep", "3600"}));
        EXPECT_EQ(r.status, 0) << r.err;
        return r.out.substr(0, r.out.find('\n'));
    }
    pid_t pid_of(const std::string& name) const {
        auto r = run_cmd(argv({"inspect", "-f", "{{.State.Pid}}", name}));
        return liveguard::parse_pid(r.out.substr(0, r.out.find('\n'))).value_or(0);
    }
    std::string rootfs() const { return base_ + "/rootfs"; }

private:
    std::string base_;
};

}  // namespace

// What a test suite does through the runtime: `podman kill` and `podman
// stop` of the protected container from a session are refused (podman
// signals through its OCI runtime, a member too); from outside any
// session podman removes it.
TEST_F(ContainerGuard, PodmanKillAndStopOfTheProtectedContainerAreRefused) {
    ASSERT_EQ(run_cmd({"podman", "--version"}).status, 0) << "Debian's podman is not installed";
    Podman podman;
    std::string id = podman.run_sleeping("lg-pod");
    ASSERT_EQ(id.size(), 64u) << id;
    pid_t pid = podman.pid_of("lg-pod");
    ASSERT_GT(pid, 0);
    std::string cgroup = cgroup_root() + "/libpod_parent/libpod-" + id;
    load_policy("[[protect]]\ncontainer = \"lg-pod\"\n");
    ASSERT_TRUE(wait_until([&] { return cgroup_protected(cgroup); })) << watcher_log();
    auto started = liveguard::read_proc_stat(pid);
    ASSERT_TRUE(started);
    Container::Gateway g{0, pid, started->start_ticks};

    Session s;
    EXPECT_NE(s.as_member([&] { return run_cmd(podman.argv({"kill", "lg-pod"})).status; }), 0);
    EXPECT_TRUE(still_runs(g)) << "podman kill from a session ended the protected container";
    EXPECT_NE(s.as_member([&] { return run_cmd(podman.argv({"stop", "-t", "1", "lg-pod"})).status; }), 0);
    EXPECT_TRUE(still_runs(g)) << "podman stop from a session ended the protected container";

    // From outside any session, podman stops it.
    EXPECT_EQ(run_cmd(podman.argv({"rm", "-f", "-t", "0", "lg-pod"})).status, 0);
}

namespace {

const std::string kEngineSocket = "/run/podman/podman.sock";

// Podman's API service (the Docker-compatible API and libpod's) on the
// socket Podman's own unit listens on, started outside any session, as a
// suite's testcontainers or docker-py would find it (DOCKER_HOST).
class PodmanService {
public:
    explicit PodmanService(const Podman& podman) {
        fs::create_directories(fs::path(kEngineSocket).parent_path());
        auto argv = podman.argv({"system", "service", "--time=0", "unix://" + kEngineSocket});
        pid_ = ::fork();
        if (pid_ == 0) {
            std::vector<char*> args;
            for (auto& a : argv) args.push_back(a.data());
            args.push_back(nullptr);
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
        EXPECT_TRUE(wait_until([&] { return run_cmd({"/usr/bin/python3", "-c", client("c.ping()")}).status == 0; },
                               60000))
            << "podman system service did not answer on " << kEngineSocket;
    }
    ~PodmanService() {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }
    PodmanService(const PodmanService&) = delete;
    PodmanService& operator=(const PodmanService&) = delete;

    // A docker-py program against the service (Debian's python3-docker).
    static std::string client(const std::string& body) {
        return "import docker\nc = docker.DockerClient(base_url='unix://" + kEngineSocket +
               "', version='1.40', timeout=30)\n" + body + "\n";
    }

private:
    pid_t pid_ = 0;
};

}  // namespace

// What a suite does through the engine's API socket, as docker-py, the
// docker CLI and testcontainers do: from a session, every request that
// would stop, remove or change the protected container is refused (the
// engine, outside every session, would have its runtime send the
// signal), by name and by short id, over the Docker-compatible API and
// libpod's; reading it, and running, killing and removing another
// container from the same image, keep working.
TEST_F(ContainerGuard, EngineApiRequestsAgainstTheProtectedContainerAreRefusedOthersServed) {
    ASSERT_EQ(run_cmd({"podman", "--version"}).status, 0) << "Debian's podman is not installed";
    ASSERT_EQ(run_cmd({"/usr/bin/python3", "-c", "import docker"}).status, 0)
        << "Debian's python3-docker is not installed";
    Podman podman;
    std::string tar = kRoot + "/podman/rootfs.tar";
    ASSERT_EQ(run_cmd({"tar", "-C", podman.rootfs(), "-cf", tar, "."}).status, 0);
    auto imported = run_cmd(podman.argv({"import", tar, "localhost/lg-busybox"}));
    ASSERT_EQ(imported.status, 0) << imported.err;
    std::string id = podman.run_sleeping("lg-api");
    ASSERT_EQ(id.size(), 64u) << id;
    pid_t pid = podman.pid_of("lg-api");
    ASSERT_GT(pid, 0);
    auto started = liveguard::read_proc_stat(pid);
    ASSERT_TRUE(started);
    Container::Gateway g{0, pid, started->start_ticks};
    PodmanService service(podman);

    load_policy("[[protect]]\ncontainer = \"lg-api\"\n");
    // The control run takes this door off too: the engine's runtime, not
    // the member, sends the signal.
    if (sabotaged()) take_links_off({"lg_socket_sendmsg"});
    ASSERT_TRUE(wait_until([&] {
        return watcher_log().find("guarding at the engines' API sockets: podman lg-api") != std::string::npos;
    })) << watcher_log();

    Session s;
    auto api = [&](const std::string& body) {
        return s.as_member([&] {
            auto r = run_cmd({"/usr/bin/python3", "-c", PodmanService::client(body)});
            if (r.status != 0) std::cerr << r.err;
            return r.status;
        });
    };
    auto remote = [&](std::initializer_list<std::string> args) {
        std::vector<std::string> argv = {"podman", "--remote", "--url", "unix://" + kEngineSocket};
        argv.insert(argv.end(), args);
        return s.as_member([&] { return run_cmd(argv).status; });
    };
    const std::string short_id = id.substr(0, 12);
    // Each request in one program (Python's start is seconds under
    // emulation); the exit status counts those that went through.
    std::string tries = "import sys\nthrough = 0\n";
    for (const auto& [what, call] : std::vector<std::pair<std::string, std::string>>{
             {"kill by name", "c.containers.get('lg-api').kill()"},
             {"stop by name", "c.api.stop('lg-api', timeout=1)"},
             {"kill by short id", "c.api.kill('" + short_id + "')"},
             {"restart", "c.api.restart('lg-api', timeout=1)"},
             {"pause", "c.api.pause('lg-api')"},
             {"remove, forced", "c.api.remove_container('lg-api', force=True)"},
             {"exec", "c.api.exec_create('lg-api', ['kill', '1'])"},
             {"rename", "c.api.rename('lg-api', 'lg-renamed')"},
         })
        tries += "try:\n    " + call + "\n    print('went through: " + what +
                 "', file=sys.stderr)\n    through += 1\nexcept Exception:\n    pass\n";
    // Requests the door cannot read to the end are refused while a
    // container is guarded: an encoded name, a full URL, a name cut by
    // the end of the write.
    tries +=
        "import socket\n"
        "def raw(*parts):\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    s.connect('" + kEngineSocket + "')\n"
        "    try:\n"
        "        for p in parts:\n"
        "            s.send(p.encode())\n"
        "        s.settimeout(10)\n"
        "        return s.recv(100).decode(errors='replace')\n"
        "    except PermissionError:\n"
        "        return None\n"
        "tail = ' HTTP/1.1\\r\\nHost: d\\r\\nContent-Length: 0\\r\\n\\r\\n'\n"
        "for what, parts in [('encoded name', ['POST /v1.40/containers/%6cg-api/kill' + tail]),\n"
        "                    ('full URL', ['POST http://d/v1.40/containers/lg-api/kill' + tail]),\n"
        "                    ('name cut by the write', ['POST /v1.40/containers/lg-a', 'pi/kill' + tail]),\n"
        "                    ('pod kill', ['POST /v4.0.0/libpod/pods/lg-pod/kill' + tail])]:\n"
        "    answer = raw(*parts)\n"
        "    if answer is not None:\n"
        "        print('went through: ' + what + ': ' + answer.splitlines()[0] if answer else 'went through: ' + what, file=sys.stderr)\n"
        "        through += 1\n";
    tries += "sys.exit(through)";
    auto refused = s.as_member([&] {
        auto r = run_cmd({"/usr/bin/python3", "-c", PodmanService::client(tries)});
        if (r.status != 0) std::cerr << r.err;
        return r.status;
    });
    EXPECT_EQ(refused, 0) << refused << " request(s) to the protected container went through";
    EXPECT_TRUE(still_runs(g)) << "the Docker-compatible API from a session ended the protected container";
    EXPECT_NE(remote({"kill", "lg-api"}), 0) << "podman --remote kill went through";
    EXPECT_NE(remote({"stop", "-t", "1", short_id}), 0) << "podman --remote stop went through";
    EXPECT_NE(remote({"rm", "-f", "lg-api"}), 0) << "podman --remote rm -f went through";
    EXPECT_TRUE(still_runs(g)) << "the libpod API from a session ended the protected container";

    // The rest of the API serves the session.
    EXPECT_EQ(api("assert c.containers.get('lg-api').status == 'running'\n"
                  "o = c.containers.run('localhost/lg-busybox', ['sleep', '3600'], name='lg-other', detach=True, "
                  "network_mode='none')\n"
                  "o.kill()\n"
                  "c.api.remove_container('lg-other', force=True)"),
              0);
    EXPECT_EQ(remote({"run", "-d", "--name", "lg-third", "--network", "none", "localhost/lg-busybox", "sleep",
                      "3600"}),
              0);
    EXPECT_EQ(remote({"rm", "-f", "-t", "0", "lg-third"}), 0);
    std::string events;
    EXPECT_TRUE(wait_until([&] {
        events = lg({"events", "--no-follow", "--since", "10m", "--json"}).out;
        return events.find("\"engine_api\"") != std::string::npos;
    })) << "no engine_api event: " << events;

    // From outside any session, the API removes it.
    EXPECT_EQ(run_cmd({"/usr/bin/python3", "-c", PodmanService::client("c.api.remove_container('lg-api', force=True)")})
                  .status,
              0);
}

// `docker exec hermes pytest`: a test run inside the container (its PID
// and mount namespaces, its cgroup), with the gateway in reach by the
// container's own number, is an automatic session as on the host; the
// journal names the test, and both pids of the culprit and of the gateway.
TEST_F(ContainerGuard, PytestInsideTheContainerIsASessionAndItsEventsGiveBothPids) {
    Container c({.cgroup = "system.slice/docker-" + id_of('e') + ".scope",
                 .volume = kRoot + "/pytest-volume",
                 .id = id_of('e')});
    auto g = c.wait_gateway();
    load_policy("[sessions]\nauto = [\"pytest\", \"python3 -m pytest\"]\n[[protect]]\npidfile = \"" + c.pid_file() +
                "\"\n");
    ASSERT_TRUE(wait_until([&] { return listed_protected(g.host_pid); })) << watcher_log();
    std::string test = kRoot + "/test_kill.py";
    write_text(test,
               "import os, signal, pytest\n"
               "def test_signals_the_gateway():\n"
               "    with pytest.raises(PermissionError):\n"
               "        os.kill(int(os.environ['LG_GATEWAY']), signal.SIGTERM)\n");
    // As `docker exec` places it: in the container's cgroup, then its
    // namespaces.
    auto r = run_cmd({"sh", "-c", "echo $$ > " + c.cgroup() + "/cgroup.procs && exec \"$@\"", "sh", "nsenter", "-t",
                      std::to_string(c.init()), "-p", "-m", "-u", "-r", "-w", "--", "env", "LG_GATEWAY=" + std::to_string(g.ns_pid),
                      "PYTHONDONTWRITEBYTECODE=1", "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      test});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out << r.err;
    EXPECT_TRUE(still_runs(g)) << "pytest inside the container ended the gateway";

    std::string line;
    EXPECT_TRUE(wait_until([&] {
        auto j = read_file("/var/log/liveguard/events.jsonl").value_or("");
        std::size_t at = j.find("\"target_pid\":" + std::to_string(g.host_pid) + ",");
        if (at == std::string::npos) return false;
        std::size_t start = j.rfind('\n', at), end = j.find('\n', at);
        line = j.substr(start == std::string::npos ? 0 : start + 1, end == std::string::npos ? end : end - start - 1);
        return line.find("test_kill.py::test_signals_the_gateway") != std::string::npos;
    })) << "no journalled refusal names the test: " << line;
    EXPECT_NE(line.find("\"target_ns_pid\":" + std::to_string(g.ns_pid) + ","), std::string::npos) << line;
    EXPECT_EQ(line.find("\"ns_pid\":0,"), std::string::npos) << "the culprit's pid in the container is missing: " << line;
    EXPECT_NE(line.find("\"ns_pid\":"), std::string::npos) << line;
}
