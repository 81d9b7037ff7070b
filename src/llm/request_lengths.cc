#include "llm/request_lengths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace migserve::llm {
namespace {

// The regularized lower incomplete gamma function P(a, x): the share of a
// gamma of shape `a` and scale 1 at or below `x`. Its power series where
// it converges fast (x < a + 1), else one minus the continued fraction of
// the upper part, evaluated by the modified Lentz method.
double LowerGammaShare(double a, double x) {
  if (x <= 0) return 0;
  double log_front = -x + a * std::log(x) - std::lgamma(a);
  constexpr double kEpsilon = 1e-15;
  constexpr int kTerms = 1000;
  if (x < a + 1) {
    double term = 1 / a;
    double sum = term;
    for (int n = 1; n < kTerms && term > sum * kEpsilon; ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return std::min(1.0, sum * std::exp(log_front));
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / kTiny;
  double d = 1 / b;
  double fraction = d;
  for (int i = 1; i < kTerms; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    double step = d * c;
    fraction *= step;
    if (std::abs(step - 1) < kEpsilon) break;
  }
  return std::max(0.0, 1 - std::exp(log_front) * fraction);
}

}  // namespace

double LengthQuantile(double mean, double cv, double p) {
  if (cv <= 0) return std::max(1.0, mean);
  double shape = 1 / (cv * cv);
  double high = std::max(1.0, shape);
  while (LowerGammaShare(shape, high) < p) high *= 2;
  double low = 0;
  // Bisection to a part in 1e12 of the quantile.
  while (high - low > 1e-12 * high) {
    double mid = (low + high) / 2;
    (LowerGammaShare(shape, mid) < p ? low : high) = mid;
  }
  return std::max(1.0, high * mean * cv * cv);
}

namespace {

constexpr double kP99 = 0.99;

// The p99 prompt and the p99 output of `terms`, tokens.
std::pair<double, double> P99Lengths(const LlmTerms& terms) {
  return {LengthQuantile(terms.prompt_tokens, terms.prompt_cv, kP99),
          LengthQuantile(terms.output_tokens, terms.output_cv, kP99)};
}

long WholeTokens(double tokens) {
  return static_cast<long>(std::ceil(tokens - 1e-9));
}

}  // namespace

long MaxModelLen(const LlmTerms& terms, const LlmModel& model) {
  if (terms.max_model_len > 0) {
    return static_cast<long>(std::ceil(terms.max_model_len));
  }
  auto [prompt, output] = P99Lengths(terms);
  long tokens = WholeTokens(prompt + output);
  return model.max_context > 0 ? std::min<long>(tokens, model.max_context)
                               : tokens;
}

std::string MaxModelLenProblem(const LlmTerms& terms) {
  if (!(terms.max_model_len > 0)) return "";
  auto [prompt, output] = P99Lengths(terms);
  const long longest = WholeTokens(prompt + output);
  if (terms.max_model_len >= static_cast<double>(longest)) return "";
  return fmt::format(
      "{:g} is below the p99 prompt plus the p99 output, {} tokens ({:.1f} + "
      "{:.1f}): vLLM would refuse more than one request in a hundred",
      terms.max_model_len, longest, prompt, output);
}

}  // namespace migserve::llm
