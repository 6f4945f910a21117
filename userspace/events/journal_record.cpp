// The journal's JSON: the record writer and its parser.
#include "events/journal_record.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json.h"
#include "base/json_members.h"

namespace liveguard {
namespace {

std::string quoted_or_null(const std::string& s) { return s.empty() ? "null" : json::quote(s); }

// What marks a session-end record; an event has no "type".
constexpr const char* kSessionEndType = "session_end";
constexpr const char* kRepeatsType = "repeats";

// A session-end record's processes: [{"pid":N,"command":"..."},...].
std::string write_processes(const std::vector<LeftProcess>& processes) {
    json::ArrayWriter a;
    for (const auto& p : processes) a.raw(json::ObjectWriter().unum("pid", p.pid).str("command", p.command).done());
    return a.done();
}

std::string write_session_end(const JournalSessionEnd& s) {
    json::ObjectWriter per_hook;
    for (const auto& [hook, n] : s.per_hook) per_hook.unum(hook, n);
    json::ArrayWriter culprits;
    for (const auto& c : s.culprits) culprits.str(c);
    return json::ObjectWriter()
        .str("type", kSessionEndType)
        .str("time", s.time)
        .unum("session_cgroup_id", s.session_cgroup_id)
        .str("name", s.name)
        .unum("root_pid", s.root_pid)
        .str("command", s.command)
        .unum("refusals", s.refusals)
        .boolean("audited", s.audited)
        .unum("oom_killed", s.oom_killed)
        .raw("per_hook", per_hook.done())
        .raw("culprits", culprits.done())
        .raw("reaped", write_processes(s.reaped))
        .raw("left_running", write_processes(s.left_running))
        .done();
}

void write_event_members(json::ObjectWriter& w, const JournalEvent& e) {
    w.str("time", e.time)
        .str("verdict", e.verdict)
        .str("hook", e.hook)
        .unum("pid", e.pid)
        .unum("tid", e.tid)
        .unum("ns_pid", e.ns_pid)
        .str("comm", e.comm)
        .unum("target_pid", e.target_pid)
        .unum("target_ns_pid", e.target_ns_pid)
        .unum("target_tid", e.target_tid)
        .str("target_comm", e.target_comm)
        .raw("signal", quoted_or_null(e.signal))
        .num("signal_number", e.signal_number)
        .unum("object_id", e.object_id)
        .unum("detail", e.detail)
        .str("act", e.act)
        .unum("session_cgroup_id", e.session_cgroup_id);
}

}  // namespace

std::string write_journal_record(const JournalRecord& record) {
    if (const auto* rep = std::get_if<JournalRepeats>(&record.body)) {
        json::ObjectWriter w;
        w.str("type", kRepeatsType)
            .unum("count", rep->count)
            .str("until", rep->until)
            .raw("session_name", quoted_or_null(rep->session_name));
        write_event_members(w, rep->of);
        return w.done();
    }
    if (const auto* loss = std::get_if<JournalLoss>(&record.body))
        return json::ObjectWriter()
            .str("lost", "ring buffer full")
            .unum("count", loss->count)
            .unum("total", loss->total)
            .done();
    if (const auto* end = std::get_if<JournalSessionEnd>(&record.body)) return write_session_end(*end);
    const auto& e = std::get<JournalEvent>(record.body);
    json::ObjectWriter w;
    write_event_members(w, e);
    if (!e.details) return w.done();
    const EventDetails& d = *e.details;
    json::ArrayWriter argv, parents;
    for (const auto& a : d.argv) argv.str(a);
    for (const auto& p : d.parents)
        parents.raw(json::ObjectWriter().unum("pid", p.pid).str("comm", p.comm).done());
    w.raw("session_name", quoted_or_null(d.session_name))
        .raw("session_path", quoted_or_null(d.session_path))
        .raw("exe", quoted_or_null(d.exe))
        .boolean("culprit_gone", d.culprit_gone)
        .raw("argv", argv.done())
        .raw("target_protected_by", quoted_or_null(d.protected_by))
        .raw("test", quoted_or_null(d.test))
        .raw("parents", parents.done());
    return w.done();
}

namespace {

// The members a journal line can have. Others (a later version's) are
// skipped, whatever their values hold.
enum Key : std::uint8_t {
    kOther,
    // an event's, and a count of repeats' event
    kTime, kVerdict, kHook, kPid, kTid, kNsPid, kComm, kTargetPid, kTargetNsPid, kTargetTid, kTargetComm,
    kSignal, kSignalNumber, kObjectId, kDetail, kAct, kSessionCgroupId,
    // an event's details
    kSessionName, kSessionPath, kExe, kCulpritGone, kArgv, kTargetProtectedBy, kTest, kParents,
    // what says the kind, and the other kinds'
    kType, kLost, kCount, kTotal, kUntil,
    kName, kRootPid, kCommand, kRefusals, kAudited, kOomKilled, kPerHook, kCulprits, kReaped, kLeftRunning,
    kKeys
};

Key key_of(std::string_view name) {
    static const std::unordered_map<std::string_view, Key> keys = {
        {"time", kTime}, {"verdict", kVerdict}, {"hook", kHook}, {"pid", kPid}, {"tid", kTid},
        {"ns_pid", kNsPid}, {"comm", kComm}, {"target_pid", kTargetPid}, {"target_ns_pid", kTargetNsPid},
        {"target_tid", kTargetTid}, {"target_comm", kTargetComm}, {"signal", kSignal},
        {"signal_number", kSignalNumber}, {"object_id", kObjectId}, {"detail", kDetail}, {"act", kAct},
        {"session_cgroup_id", kSessionCgroupId}, {"session_name", kSessionName},
        {"session_path", kSessionPath}, {"exe", kExe}, {"culprit_gone", kCulpritGone}, {"argv", kArgv},
        {"target_protected_by", kTargetProtectedBy}, {"test", kTest}, {"parents", kParents},
        {"type", kType}, {"lost", kLost}, {"count", kCount}, {"total", kTotal}, {"until", kUntil},
        {"name", kName}, {"root_pid", kRootPid}, {"command", kCommand}, {"refusals", kRefusals},
        {"audited", kAudited}, {"oom_killed", kOomKilled}, {"per_hook", kPerHook}, {"culprits", kCulprits},
        {"reaped", kReaped}, {"left_running", kLeftRunning},
    };
    auto it = keys.find(name);
    return it == keys.end() ? kOther : it->second;
}

// A line has details when it has any of them.
constexpr Key kDetailKeys[] = {kSessionName, kExe, kSessionPath, kCulpritGone,
                               kArgv,        kTargetProtectedBy, kTest, kParents};

struct Scalar {
    enum Kind : std::uint8_t { kAbsent, kNull, kString, kUnsigned, kSigned, kBool, kFloat } kind = kAbsent;
    std::string text;
    std::uint64_t u = 0;
    std::int64_t i = 0;  // negative
    bool b = false;
};

// An element of parents, reaped or left_running: {"pid":N,"comm"|"command":"..."}.
struct Element {
    std::uint32_t pid = 0;
    std::string text;
};

// What one line held, member by member, as the parser handed it out.
struct Line {
    std::array<bool, kKeys> present{};
    std::array<Scalar, kKeys> scalar{};
    std::vector<std::string> argv, culprits;
    std::vector<Element> parents, reaped, left_running;
    std::map<std::string, std::size_t> per_hook;

    std::vector<Element>* elements(Key k) {
        return k == kParents ? &parents : k == kReaped ? &reaped : k == kLeftRunning ? &left_running : nullptr;
    }
    std::vector<std::string>* strings(Key k) {
        return k == kArgv ? &argv : k == kCulprits ? &culprits : nullptr;
    }
    bool is(Key k, std::string_view text) const {
        return scalar[k].kind == Scalar::kString && scalar[k].text == text;
    }
};

// Reads a line into a Line as nlohmann/json's SAX parser goes through it,
// without building the document: the journal's shapes are fixed (members
// that are strings, numbers and flags; arrays of strings; arrays of flat
// objects; one object of counts), and a value of the wrong shape ends the
// reading. Given `since`, a record older than it ends the reading as soon
// as the member that dates it is read: an event's time, its first member;
// a session end's time and a count of repeats' until, which follow their
// type. A reader of the last day of a full journal then decodes the rest
// of the lines only.
class LineReader final : public nlohmann::json_sax<nlohmann::json> {
public:
    explicit LineReader(const std::optional<std::string>& since) : since_(since) {}

    Line line;
    bool older = false;

    bool null() override { return put(Scalar{Scalar::kNull}); }
    bool boolean(bool v) override {
        Scalar s{Scalar::kBool};
        s.b = v;
        return put(std::move(s));
    }
    bool number_integer(number_integer_t v) override {
        Scalar s{v < 0 ? Scalar::kSigned : Scalar::kUnsigned};
        s.i = v;
        s.u = v < 0 ? 0 : static_cast<std::uint64_t>(v);
        return put(std::move(s));
    }
    bool number_unsigned(number_unsigned_t v) override {
        Scalar s{Scalar::kUnsigned};
        s.u = v;
        return put(std::move(s));
    }
    bool number_float(number_float_t, const string_t&) override { return put(Scalar{Scalar::kFloat}); }
    bool string(string_t& v) override {
        Scalar s{Scalar::kString};
        s.text = std::move(v);
        return put(std::move(s));
    }
    bool binary(binary_t&) override { return false; }

    bool start_object(std::size_t) override {
        ++depth_;
        if (skip_from_ || depth_ == 1) return true;
        if (depth_ == 2 && key_ == kPerHook) return true;
        if (depth_ == 3 && line.elements(key_)) {
            line.elements(key_)->emplace_back();
            return true;
        }
        return skip_unknown();
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override {
        ++depth_;
        if (skip_from_) return true;
        if (depth_ == 2 && (line.elements(key_) || line.strings(key_))) return true;
        return skip_unknown();
    }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        if (skip_from_) return true;
        if (depth_ == 1) {
            key_ = key_of(k);
            line.present[key_] = true;
            ++members_;
        } else {
            inner_key_ = std::move(k);
        }
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    // A value of a member this version does not know is skipped whole;
    // any other container where the journal has none ends the reading.
    bool skip_unknown() {
        if (depth_ != 2 || key_ != kOther) return false;
        skip_from_ = depth_;
        return true;
    }
    bool close() {
        if (skip_from_ == depth_) skip_from_ = 0;
        --depth_;
        return true;
    }
    bool put(Scalar&& v) {
        if (skip_from_) return true;
        switch (depth_) {
            case 1:
                line.scalar[key_] = std::move(v);
                return !dated_before_since();
            case 2:
                if (key_ == kPerHook) {
                    if (v.kind != Scalar::kUnsigned) return false;
                    line.per_hook[inner_key_] = v.u;
                    return true;
                }
                if (auto* list = line.strings(key_)) {
                    if (v.kind != Scalar::kString) return false;
                    list->push_back(std::move(v.text));
                    return true;
                }
                return key_ == kOther;
            case 3: {
                auto* list = line.elements(key_);
                if (!list) return false;
                Element& e = list->back();
                if (inner_key_ == "pid") {
                    if (v.kind != Scalar::kUnsigned || v.u > UINT32_MAX) return false;
                    e.pid = static_cast<std::uint32_t>(v.u);
                } else if (inner_key_ == (key_ == kParents ? "comm" : "command")) {
                    if (v.kind == Scalar::kString) e.text = std::move(v.text);
                    else if (v.kind != Scalar::kNull) return false;
                }
                return true;
            }
            default:
                return false;  // the line is not an object
        }
    }
    bool dated_before_since() {
        if (!since_) return false;
        bool dates = (key_ == kTime && (members_ == 1 || line.is(kType, kSessionEndType))) ||
                     (key_ == kUntil && line.is(kType, kRepeatsType));
        const Scalar& v = line.scalar[key_];
        older = dates && v.kind == Scalar::kString && v.text < *since_;
        return older;
    }

    const std::optional<std::string>& since_;
    int depth_ = 0;
    Key key_ = kOther;     // the top-level member being read
    int skip_from_ = 0;    // inside an unknown member's value, opened at this depth
    std::string inner_key_;  // a member's key inside per_hook or an element
    int members_ = 0;      // top-level members so far
};

// Turns a Line's members into a record's fields, by kind: a member that is
// absent or null reads as empty, zero or false; one of another kind makes
// the line no record.
class Fields {
public:
    explicit Fields(Line& line) : line_(line) {}
    bool ok() const { return ok_; }
    bool has(Key k) const { return line_.present[k]; }

    std::string text(Key k) {
        Scalar& v = line_.scalar[k];
        if (v.kind == Scalar::kString) return std::move(v.text);
        ok_ &= v.kind == Scalar::kAbsent || v.kind == Scalar::kNull;
        return {};
    }
    template <typename T>
    T number(Key k) {
        const Scalar& v = line_.scalar[k];
        if (v.kind == Scalar::kAbsent || v.kind == Scalar::kNull) return T{};
        if (v.kind == Scalar::kUnsigned && v.u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
            return static_cast<T>(v.u);
        if constexpr (std::numeric_limits<T>::is_signed)
            if (v.kind == Scalar::kSigned && v.i >= std::numeric_limits<T>::min()) return static_cast<T>(v.i);
        ok_ = false;
        return T{};
    }
    bool flag(Key k) {
        const Scalar& v = line_.scalar[k];
        ok_ &= v.kind == Scalar::kAbsent || v.kind == Scalar::kNull || v.kind == Scalar::kBool;
        return v.kind == Scalar::kBool && v.b;
    }
    // The array and object members are read whole by LineReader; a scalar
    // in their place (null aside) is of another kind.
    void container(Key k) {
        auto kind = line_.scalar[k].kind;
        ok_ &= kind == Scalar::kAbsent || kind == Scalar::kNull;
    }

private:
    Line& line_;
    bool ok_ = true;
};

JournalEvent read_event_members(Fields& f) {
    JournalEvent e;
    e.time = f.text(kTime);
    e.verdict = f.text(kVerdict);
    e.hook = f.text(kHook);
    e.pid = f.number<std::uint32_t>(kPid);
    e.tid = f.number<std::uint32_t>(kTid);
    e.ns_pid = f.number<std::uint32_t>(kNsPid);
    e.comm = f.text(kComm);
    e.target_pid = f.number<std::uint32_t>(kTargetPid);
    e.target_tid = f.number<std::uint32_t>(kTargetTid);
    e.target_ns_pid = f.number<std::uint32_t>(kTargetNsPid);
    e.target_comm = f.text(kTargetComm);
    e.signal = f.text(kSignal);
    e.signal_number = f.number<std::int32_t>(kSignalNumber);
    e.object_id = f.number<std::uint64_t>(kObjectId);
    e.detail = f.number<std::uint32_t>(kDetail);
    e.act = f.text(kAct);
    e.session_cgroup_id = f.number<std::uint64_t>(kSessionCgroupId);
    return e;
}

EventDetails read_details(Fields& f, Line& line) {
    EventDetails d;
    d.session_name = f.text(kSessionName);
    d.session_path = f.text(kSessionPath);
    d.exe = f.text(kExe);
    d.culprit_gone = f.flag(kCulpritGone);
    f.container(kArgv);
    d.argv = std::move(line.argv);
    d.protected_by = f.text(kTargetProtectedBy);
    d.test = f.text(kTest);
    f.container(kParents);
    for (auto& p : line.parents) d.parents.push_back({p.pid, std::move(p.text)});
    return d;
}

std::vector<LeftProcess> processes(std::vector<Element>& elements) {
    std::vector<LeftProcess> out;
    for (auto& e : elements) out.push_back({e.pid, std::move(e.text)});
    return out;
}

std::optional<JournalRecord> read_session_end(Fields& f, Line& line) {
    JournalSessionEnd s;
    s.time = f.text(kTime);
    s.session_cgroup_id = f.number<std::uint64_t>(kSessionCgroupId);
    s.name = f.text(kName);
    s.root_pid = f.number<std::uint32_t>(kRootPid);
    s.command = f.text(kCommand);
    s.refusals = f.number<std::size_t>(kRefusals);
    s.audited = f.flag(kAudited);
    s.oom_killed = f.number<std::size_t>(kOomKilled);
    for (Key k : {kPerHook, kCulprits, kReaped, kLeftRunning}) f.container(k);
    s.per_hook = std::move(line.per_hook);
    s.culprits = std::move(line.culprits);
    s.reaped = processes(line.reaped);
    s.left_running = processes(line.left_running);
    if (!f.ok()) return std::nullopt;
    return JournalRecord{std::move(s)};
}

std::optional<JournalRecord> journal_record_from_line(Line& line) {
    Fields f(line);
    if (f.has(kLost)) {
        JournalLoss loss;
        loss.count = f.number<std::uint64_t>(kCount);
        loss.total = f.number<std::uint64_t>(kTotal);
        if (!f.ok()) return std::nullopt;
        return JournalRecord{loss};
    }
    // Kinds added later say what they are; one this version does not know
    // is no record, rather than an event with most of it missing.
    if (f.has(kType)) {
        std::string type = f.text(kType);
        if (type == kRepeatsType) {
            JournalRepeats r;
            r.count = f.number<std::uint64_t>(kCount);
            r.until = f.text(kUntil);
            r.session_name = f.text(kSessionName);
            r.of = read_event_members(f);
            if (!f.ok() || r.of.time.empty()) return std::nullopt;
            return JournalRecord{std::move(r)};
        }
        if (type != kSessionEndType) return std::nullopt;
        return read_session_end(f, line);
    }
    // Every event line has had its time; an object without is another file's.
    if (!f.has(kTime)) return std::nullopt;
    JournalEvent e = read_event_members(f);
    if (std::any_of(std::begin(kDetailKeys), std::end(kDetailKeys), [&](Key k) { return f.has(k); }))
        e.details = read_details(f, line);
    if (!f.ok()) return std::nullopt;
    return JournalRecord{std::move(e)};
}

}  // namespace

bool is_journal_record_line(std::string_view line) {
    // The first member each writer above puts first.
    static const std::string kStarts[] = {
        "{\"time\":",
        "{\"lost\":",
        std::string("{\"type\":\"") + kRepeatsType + "\",",
        std::string("{\"type\":\"") + kSessionEndType + "\",",
    };
    for (const auto& start : kStarts)
        if (line.substr(0, start.size()) == start) return json::is_object(line);
    return false;
}

std::optional<JournalRecord> parse_journal_record(std::string_view line, const std::optional<std::string>& since) {
    LineReader reader(since);
    if (!nlohmann::json::sax_parse(line.begin(), line.end(), &reader)) return std::nullopt;
    return journal_record_from_line(reader.line);
}

}  // namespace liveguard
