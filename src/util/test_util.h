// Helpers shared by the unit tests: where the source tree is, scratch files.
#ifndef MIGSERVE_UTIL_TEST_UTIL_H_
#define MIGSERVE_UTIL_TEST_UTIL_H_

#include <string>
#include <utility>

namespace migserve::testing {

// Returns the absolute path of `relative` inside the source tree.
std::string SourcePath(const std::string& relative);

// Returns a fresh empty directory for this test, removed at exit.
std::string TempDir();

// Writes `contents` to `TempDir()/name` and returns the path.
std::string WriteTempFile(const std::string& name, const std::string& contents);

// Returns how many times the regular expression `pattern` matches in `text`.
int CountMatches(const std::string& text, const std::string& pattern);

// Runs `command` with /bin/sh, its standard error with its output: the
// exit status (-1 where it did not exit) and what it printed (a real
// kubectl's, say).
std::pair<int, std::string> RunShell(const std::string& command);

// A TCP port free on 127.0.0.1 now, for a real server a test starts.
int FreePort();

// Whether this build runs under AddressSanitizer, by GCC's macro or
// clang's feature test: timing tests slow down or skip under it.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace migserve::testing

#endif  // MIGSERVE_UTIL_TEST_UTIL_H_
