#include "boundary/checked_name.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace migserve {
namespace {

// A name is made only by its check: no default, no constructor from text.
static_assert(!std::is_default_constructible_v<ServiceName>);
static_assert(!std::is_constructible_v<ServiceName, std::string>);
static_assert(!std::is_convertible_v<std::string, ObjectName>);

TEST(CheckedNameTest, ServiceNamesArePlainNamesAndNothingElse) {
  EXPECT_EQ(ServiceName::Parse("resnet.50_a-1")->str(), "resnet.50_a-1");
  for (const char* bad :
       {"", "a b", "a;b", "a{", "-a", "a-", "a\nb", "$x", "\"q\"", "a/b"}) {
    StatusOr<ServiceName> name = ServiceName::Parse(bad);
    ASSERT_FALSE(name.ok()) << bad;
    EXPECT_EQ(name.status().message().rfind("service name must be 1 to 63", 0),
              0u)
        << name.status().message();
  }
  EXPECT_FALSE(ServiceName::Parse(std::string(64, 'a')).ok());
  EXPECT_FALSE(ModelName::Parse(std::string("a\0b", 3)).ok());
  EXPECT_EQ(ServiceName::Problem("ok"), "");
}

TEST(CheckedNameTest, ObjectNamesAreDnsSubdomainsAndLabelsAlwaysAre) {
  EXPECT_TRUE(ObjectName::Parse("node-1.rack-2").ok());
  EXPECT_FALSE(ObjectName::Parse("Node_1").ok());
  EXPECT_FALSE(ObjectName::Parse(std::string(254, 'a')).ok());
  // Any text has a label that is an object name, and the same every time.
  for (const char* text : {"A_B", "a.b", "---", "", "Search", "ü"}) {
    ObjectName label = ObjectLabel(text);
    EXPECT_TRUE(ObjectName::Parse(label.str()).ok()) << text;
    EXPECT_EQ(label, ObjectLabel(text));
  }
  EXPECT_EQ(ObjectLabel("A_B").str(), "a-b");
}

}  // namespace
}  // namespace migserve
