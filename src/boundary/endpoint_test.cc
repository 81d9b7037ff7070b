#include "boundary/endpoint.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace migserve {
namespace {

static_assert(!std::is_default_constructible_v<Endpoint>);
static_assert(!std::is_constructible_v<Endpoint, std::string, int>);

// What issue 76's probe put in a pod's status.podIP and ports: nothing of
// it makes an Endpoint, and so nothing of it reaches a server line.
TEST(EndpointTest, ForgedAddressesAndPortsMakeNoEndpoint) {
  for (const char* host :
       {"127.0.0.1:18503; } server { listen 18097; return 200 \"pwn\"; }",
        "10.0.0.1 10.0.0.2", "a;b", "", "h{", "$host", "1.2.3.4\n"}) {
    EXPECT_FALSE(Endpoint::Parse(host, 80).ok()) << host;
    EXPECT_FALSE(Endpoint::ParseIp(host, 80).ok()) << host;
  }
  EXPECT_FALSE(Endpoint::ParseIp(std::string("10.0.0.1\0x", 10), 80).ok());
  for (long port : {0L, -1L, 65536L, 99999999L}) {
    StatusOr<Endpoint> at = Endpoint::Parse("10.0.0.1", port);
    ASSERT_FALSE(at.ok());
    EXPECT_EQ(at.status().message(), "port " + std::to_string(port) +
                                         " is not a TCP port (1 to 65535)");
  }
  // A pod's IP must be an address literal: a host name is refused there.
  EXPECT_FALSE(Endpoint::ParseIp("replica.local", 80).ok());
  EXPECT_EQ(Endpoint::ParseIp("not an ip", 80).status().message(),
            "address \"not an ip\" is not an IP address");
}

TEST(EndpointTest, WrittenAsAServerLineTakesIt) {
  EXPECT_EQ(Endpoint::ParseIp("10.0.0.1", 8000)->HostPort(), "10.0.0.1:8000");
  EXPECT_EQ(Endpoint::ParseIp("fd00::17", 9003)->HostPort(), "[fd00::17]:9003");
  EXPECT_EQ(Endpoint::Parse("replica-0.svc", 80)->HostPort(),
            "replica-0.svc:80");
  Endpoint http = *Endpoint::ParseIp("10.0.0.1", 8000);
  EXPECT_EQ(http.AtPort(8001)->HostPort(), "10.0.0.1:8001");
  EXPECT_FALSE(http.AtPort(70000).ok());
}

TEST(EndpointTest, ListenAddressesAsFlagsGiveThem) {
  EXPECT_EQ(Endpoint::ParseListen("8080")->HostPort(), "0.0.0.0:8080");
  EXPECT_EQ(Endpoint::ParseListen("127.0.0.1:18080")->HostPort(),
            "127.0.0.1:18080");
  EXPECT_EQ(Endpoint::ParseListen("[::1]:80")->HostPort(), "[::1]:80");
  for (const char* bad : {"", "80;", "0.0.0.0:80; } server {", "::1:80",
                          "host:", "host:0", "h:123456", "a b:80"}) {
    EXPECT_FALSE(Endpoint::ParseListen(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace migserve
