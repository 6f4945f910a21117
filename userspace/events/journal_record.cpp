// The journal's JSON: the record writer and its parser.
#include "events/journal_record.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "base/json.h"

namespace liveguard {
namespace {

std::string quoted_or_null(const std::string& s) { return s.empty() ? "null" : json::quote(s); }

// Reads an object's members by kind: a member that is absent reads as empty
// or zero; one that does not read as its kind makes the object no record.
class Members {
public:
    explicit Members(const std::map<std::string, std::string>& obj) : obj_(obj) {}

    bool ok() const { return ok_; }
    bool has(const char* key) const { return obj_.count(key) > 0; }

    std::string text(const char* key) const {
        auto it = obj_.find(key);
        return it == obj_.end() ? "" : it->second;
    }
    // parse_object hands null out as its raw text.
    std::string text_or_null(const char* key) const {
        std::string v = text(key);
        return v == "null" ? "" : v;
    }
    template <typename T>
    T number(const char* key) {
        T v{};
        if (!has(key)) return v;
        std::string s = text(key);
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        ok_ &= ec == std::errc() && end == s.data() + s.size();
        return v;
    }
    bool flag(const char* key) {
        if (!has(key)) return false;
        std::string v = text(key);
        ok_ &= v == "true" || v == "false";
        return v == "true";
    }
    std::vector<std::string> list(const char* key) {
        if (!has(key)) return {};
        auto v = json::parse_array(text(key));
        ok_ &= v.has_value();
        return v.value_or(std::vector<std::string>{});
    }

private:
    const std::map<std::string, std::string>& obj_;
    bool ok_ = true;
};

// What marks a session-end record; an event has no "type".
constexpr const char* kSessionEndType = "session_end";
constexpr const char* kRepeatsType = "repeats";

// A line has details when it has any of them.
constexpr const char* kDetailKeys[] = {"session_name", "session_path",        "exe",  "culprit_gone",
                                       "argv",         "target_protected_by", "test", "parents"};

std::optional<EventDetails> read_details(Members& m) {
    EventDetails d;
    d.session_name = m.text_or_null("session_name");
    d.session_path = m.text_or_null("session_path");
    d.exe = m.text_or_null("exe");
    d.culprit_gone = m.flag("culprit_gone");
    d.argv = m.list("argv");
    d.protected_by = m.text_or_null("target_protected_by");
    d.test = m.text_or_null("test");
    for (const auto& text : m.list("parents")) {
        auto obj = json::parse_object(text);
        if (!obj) return std::nullopt;
        Members p(*obj);
        Ancestor a;
        a.pid = p.number<std::uint32_t>("pid");
        a.comm = p.text("comm");
        if (!p.ok()) return std::nullopt;
        d.parents.push_back(std::move(a));
    }
    return d;
}

// A session-end record's processes: [{"pid":N,"command":"..."},...].
std::string write_processes(const std::vector<LeftProcess>& processes) {
    json::ArrayWriter a;
    for (const auto& p : processes) a.raw(json::ObjectWriter().unum("pid", p.pid).str("command", p.command).done());
    return a.done();
}

std::optional<std::vector<LeftProcess>> read_processes(Members& m, const char* key) {
    std::vector<LeftProcess> out;
    for (const auto& text : m.list(key)) {
        auto obj = json::parse_object(text);
        if (!obj) return std::nullopt;
        Members p(*obj);
        LeftProcess lp;
        lp.pid = p.number<std::uint32_t>("pid");
        lp.command = p.text("command");
        if (!p.ok()) return std::nullopt;
        out.push_back(std::move(lp));
    }
    return out;
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

std::optional<JournalRecord> read_session_end(Members& m) {
    JournalSessionEnd s;
    s.time = m.text("time");
    s.session_cgroup_id = m.number<std::uint64_t>("session_cgroup_id");
    s.name = m.text("name");
    s.root_pid = m.number<std::uint32_t>("root_pid");
    s.command = m.text("command");
    s.refusals = m.number<std::size_t>("refusals");
    s.audited = m.flag("audited");
    if (m.has("oom_killed")) s.oom_killed = m.number<std::size_t>("oom_killed");
    if (m.has("per_hook")) {
        auto hooks = json::parse_object(m.text("per_hook"));
        if (!hooks) return std::nullopt;
        for (const auto& [hook, text] : *hooks) {
            std::size_t n = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
            if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
            s.per_hook[hook] = n;
        }
    }
    s.culprits = m.list("culprits");
    auto reaped = read_processes(m, "reaped");
    auto left = read_processes(m, "left_running");
    if (!reaped || !left || !m.ok()) return std::nullopt;
    s.reaped = std::move(*reaped);
    s.left_running = std::move(*left);
    return JournalRecord{std::move(s)};
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

JournalEvent read_event_members(Members& m) {
    JournalEvent e;
    e.time = m.text("time");
    e.verdict = m.text("verdict");
    e.hook = m.text("hook");
    e.pid = m.number<std::uint32_t>("pid");
    e.tid = m.number<std::uint32_t>("tid");
    e.ns_pid = m.number<std::uint32_t>("ns_pid");
    e.comm = m.text("comm");
    e.target_pid = m.number<std::uint32_t>("target_pid");
    e.target_tid = m.number<std::uint32_t>("target_tid");
    e.target_ns_pid = m.number<std::uint32_t>("target_ns_pid");
    e.target_comm = m.text("target_comm");
    e.signal = m.text_or_null("signal");
    e.signal_number = m.number<std::int32_t>("signal_number");
    e.object_id = m.number<std::uint64_t>("object_id");
    e.detail = m.number<std::uint32_t>("detail");
    e.act = m.text("act");
    e.session_cgroup_id = m.number<std::uint64_t>("session_cgroup_id");
    return e;
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

std::optional<JournalRecord> journal_record_from_object(const std::map<std::string, std::string>& obj) {
    Members m(obj);
    if (m.has("lost")) {
        JournalLoss loss;
        loss.count = m.number<std::uint64_t>("count");
        loss.total = m.number<std::uint64_t>("total");
        if (!m.ok()) return std::nullopt;
        return JournalRecord{loss};
    }
    // Kinds added later say what they are; one this version does not know
    // is no record, rather than an event with most of it missing.
    if (m.has("type")) {
        if (m.text("type") == kRepeatsType) {
            JournalRepeats r;
            r.count = m.number<std::uint64_t>("count");
            r.until = m.text("until");
            r.session_name = m.text_or_null("session_name");
            r.of = read_event_members(m);
            if (!m.ok() || r.of.time.empty()) return std::nullopt;
            return JournalRecord{std::move(r)};
        }
        if (m.text("type") != kSessionEndType) return std::nullopt;
        return read_session_end(m);
    }
    // Every event line has had its time; an object without is another file's.
    if (!m.has("time")) return std::nullopt;
    JournalEvent e = read_event_members(m);
    auto present = [&](const char* key) { return m.has(key); };
    if (std::any_of(std::begin(kDetailKeys), std::end(kDetailKeys), present)) {
        e.details = read_details(m);
        if (!e.details) return std::nullopt;
    }
    if (!m.ok()) return std::nullopt;
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

std::optional<JournalRecord> parse_journal_record(std::string_view line) {
    auto obj = json::parse_object(line);
    if (!obj) return std::nullopt;
    return journal_record_from_object(*obj);
}

}  // namespace liveguard
