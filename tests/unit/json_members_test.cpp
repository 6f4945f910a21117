#include "base/json_members.h"

#include <gtest/gtest.h>

#include "base/json.h"

using namespace liveguard;

TEST(Json, ParseReadsWhatTheWriterWrites) {
    std::string line = json::ObjectWriter()
                           .str("a", "x\"y\n\xc3\xa9")
                           .num("n", -4)
                           .raw("arr", "[{\"pid\":1},2]")
                           .raw("z", "null")
                           .str("bad", "\xff")
                           .done();
    auto o = json::parse(line);
    ASSERT_TRUE(o.has_value());
    json::Members m(*o);
    EXPECT_EQ(m.text("a"), "x\"y\n\xc3\xa9");
    EXPECT_EQ(m.number<int>("n"), -4);
    EXPECT_EQ(m.text("z"), "");
    // A byte that is not UTF-8 is written as U+00FF, which reads back.
    EXPECT_EQ(m.text("bad"), "\xc3\xbf");
    ASSERT_NE(m.array("arr"), nullptr);
    EXPECT_EQ((*m.array("arr"))[0]["pid"], 1);
    EXPECT_TRUE(m.ok());
    EXPECT_FALSE(json::parse("{\"a\":1").has_value());
    EXPECT_FALSE(json::parse("{\"a\":1} trailing").has_value());
    EXPECT_FALSE(json::parse("{\"a\":\"\xff\"}").has_value());  // raw bytes that are not UTF-8
    // Surrogate pairs, which a hand-written reader got wrong, decode to one character.
    EXPECT_EQ(json::Members(*json::parse(R"({"s":"\ud83d\ude00"})")).text("s"), "\xf0\x9f\x98\x80");
}

TEST(Json, MembersOfAnotherKindAreNotReadAsTheirs) {
    auto o = json::parse(R"({"s":5,"n":"5","neg":-1,"big":4294967296,"f":1.5,"b":"true","l":["a",1],"ok":"x"})");
    ASSERT_TRUE(o.has_value());
    {
        json::Members m(*o);
        EXPECT_EQ(m.text("ok"), "x");
        EXPECT_EQ(m.text("absent"), "");
        EXPECT_EQ(m.number<std::uint32_t>("absent"), 0u);
        EXPECT_TRUE(m.ok());
    }
    auto one = [&](auto read) {
        json::Members m(*o);
        read(m);
        return m.ok();
    };
    EXPECT_FALSE(one([](json::Members& m) { m.text("s"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.number<int>("n"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.number<std::uint32_t>("neg"); }));
    EXPECT_TRUE(one([](json::Members& m) { m.number<int>("neg"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.number<std::uint32_t>("big"); }));
    EXPECT_TRUE(one([](json::Members& m) { m.number<std::uint64_t>("big"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.number<std::uint64_t>("f"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.flag("b"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.strings("l"); }));
    EXPECT_FALSE(one([](json::Members& m) { m.numbers<int>("l"); }));
    EXPECT_FALSE(json::Members(*json::parse("[1]")).ok());
}

TEST(Json, IsObjectChecksWithoutBuilding) {
    EXPECT_TRUE(json::is_object(R"({"a":"x\"y","b":[1,{"c":null}]})"));
    EXPECT_TRUE(json::is_object(" {} "));
    EXPECT_FALSE(json::is_object(R"({"a":"x)"));
    EXPECT_FALSE(json::is_object(R"({"a":1} x)"));
    EXPECT_FALSE(json::is_object("[1]"));
    EXPECT_FALSE(json::is_object(std::string(1000, '{')));
}

TEST(Json, NestingAsDeepAsACorruptLineHoldsIsNotRecursedInto) {
    // A hand-written reader took one stack frame per level, and a journal
    // line of a million '[' overflowed the stack.
    std::string deep = "{\"parents\":" + std::string(1000000, '[') + std::string(1000000, ']') + "}";
    auto o = json::parse(deep);
    ASSERT_TRUE(o.has_value());
    EXPECT_TRUE(json::is_object(deep));
    EXPECT_FALSE(json::parse(std::string(1000000, '{')).has_value());
}

TEST(Json, QuoteKeepsOnlyWellFormedUtf8SoEveryLineParses) {
    // Overlong forms, surrogates and code points past U+10FFFF are not
    // UTF-8: a strict reader refuses the whole line for one of them.
    for (std::string bad : {"\xe0\x99\x90", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80"}) {
        std::string line = json::ObjectWriter().str("comm", "a" + bad + "b").done();
        auto o = json::parse(line);
        ASSERT_TRUE(o.has_value()) << line;
        json::Members m(*o);
        std::string text = m.text("comm");
        EXPECT_EQ(text.front(), 'a');
        EXPECT_EQ(text.back(), 'b');
        EXPECT_NE(text, "a" + bad + "b");
    }
    for (std::string good : {"\xc3\xa9", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"})
        EXPECT_EQ(json::Members(*json::parse(json::ObjectWriter().str("s", good).done())).text("s"), good);
}
