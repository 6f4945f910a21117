// The event journal's lines carry what culprits chose (comm, argv, test
// ids), and a journal may end in a torn line. parse_journal_record reads
// them into records (with and without a --since that cuts lines short),
// and format_journal_text prints those; json::parse reads the session info
// and watcher files.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "events/event_format.h"
#include "events/journal_record.h"
#include "base/json.h"
#include "base/json_members.h"

using namespace liveguard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);

    if (auto obj = json::parse(in)) {
        auto again = json::parse(in);
        if (!again || *again != *obj) __builtin_trap();
    }
    (void)parse_journal_record(in, std::string("2026-12-01T10:00:00.000Z"));
    if (auto record = parse_journal_record(in)) {
        (void)format_journal_text(*record, false);
        (void)format_journal_text(*record, true);
        // What the writer writes, the parser reads.
        if (!parse_journal_record(write_journal_record(*record))) __builtin_trap();
    }

    // The writer promises that whatever it quotes parses back ("the output
    // always parses"); bytes that are not UTF-8 come back as U+00XX, so
    // only ASCII must round-trip exactly.
    std::string line = json::ObjectWriter().str("comm", in).num("pid", 7).done();
    auto back = json::parse(line);
    if (!back) __builtin_trap();
    json::Members m(*back);
    if (back->size() != 2 || m.number<int>("pid") != 7) __builtin_trap();
    bool ascii = true;
    for (unsigned char c : in) ascii &= c < 0x80;
    if (ascii && m.text("comm") != in) __builtin_trap();
    if (!m.ok()) __builtin_trap();
    return 0;
}
