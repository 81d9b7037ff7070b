#include "optimizer/heuristic/top_group.h"

#include <algorithm>

namespace migserve::optimizer {

TopGroup::TopGroup(const ConfigSpace& space,
                   const deployment::CompletionRates& rates,
                   const ScoreRule& rule)
    : space_(space),
      rates_(rates),
      rule_(rule),
      num_classes_(space.num_classes()),
      members_(num_classes_),
      best_(num_classes_),
      recount_(num_classes_, 0),
      stale_(num_classes_ * (num_classes_ + 1), 0) {
  for (int s = 0; s < space.problem().num_services(); ++s) {
    members_[space.class_of(s)].push_back(s);
  }
  for (int c = 0; c < num_classes_; ++c) {
    best_[c].resize(space.num_shares(members_[c].front()));
    Recount(c);
  }
  for (int ca = 0; ca < num_classes_; ++ca) {
    for (int cb = ca; cb <= num_classes_; ++cb) {
      double bound = Bound(ca, cb);
      if (bound > 0) heap_.emplace_back(bound, KeyOf(ca, cb));
    }
  }
  std::make_heap(heap_.begin(), heap_.end());
}

void TopGroup::Changed(int s) {
  int c = space_.class_of(s);
  if (!recount_[c]) to_recount_.push_back(c);
  recount_[c] = 1;
}

void TopGroup::Recount(int c) {
  for (size_t k = 0; k < best_[c].size(); ++k) {
    Best& b = best_[c][k];
    b = Best{};
    for (int s : members_[c]) {
      double term =
          rule_.Term(rates_[s], space_.share_utility(s, static_cast<int>(k)));
      if (term > b.first) {
        b.second = b.first;
        b.first = term;
        b.first_service = s;
      } else if (term > b.second) {
        b.second = term;
      }
    }
  }
}

double TopGroup::Bound(int ca, int cb) const {
  double bound = 0;
  if (cb == num_classes_) {
    space_.ForEachFront(ca, cb, [&](int sa, int) {
      bound = std::max(bound, best_[ca][sa].first);
    });
  } else if (ca != cb) {
    space_.ForEachFront(ca, cb, [&](int sa, int sb) {
      bound = std::max(bound, best_[ca][sa].first + best_[cb][sb].first);
    });
  } else if (members_[ca].size() >= 2) {
    // Two services of one class: the best two that are not one service.
    space_.ForEachFront(ca, cb, [&](int sa, int sb) {
      const Best& a = best_[ca][sa];
      const Best& b = best_[ca][sb];
      bound = std::max(bound,
                       a.first_service != b.first_service
                           ? a.first + b.first
                           : std::max(a.first + b.second, a.second + b.first));
    });
  }
  return bound;
}

void TopGroup::RescoreTop() {
  const int key = heap_.front().second;
  stale_[key] = 0;
  const double bound =
      Bound(key / (num_classes_ + 1), key % (num_classes_ + 1));
  if (bound <= 0) {
    std::pop_heap(heap_.begin(), heap_.end());
    heap_.pop_back();
    return;
  }
  // The bound only fell, and mostly a little: sift it down from the top
  // (a pop and a push would each walk the heap's height).
  const size_t n = heap_.size();
  const Entry entry{bound, key};
  size_t at = 0;
  for (size_t child = 1; child < n; child = 2 * at + 1) {
    if (child + 1 < n && heap_[child] < heap_[child + 1]) ++child;
    if (!(entry < heap_[child])) break;
    heap_[at] = heap_[child];
    at = child;
  }
  heap_[at] = entry;
}

int TopGroup::Find(double* score) {
  for (int c : to_recount_) {
    Recount(c);
    recount_[c] = 0;
    for (int other = 0; other <= num_classes_; ++other) {
      stale_[other < c ? KeyOf(other, c) : KeyOf(c, other)] = 1;
    }
  }
  to_recount_.clear();
  // Brings an up-to-date bound to the top, if any is left.
  auto settle = [this] {
    while (!heap_.empty() && stale_[heap_.front().second]) RescoreTop();
    return !heap_.empty();
  };
  *score = 0;
  if (!settle()) return -1;
  const double top = heap_.front().first;
  // Every pair of classes that reaches the top score: the lowest group may
  // be in any of them.
  std::vector<Entry> tied;
  while (settle() && heap_.front().first >= top) {
    tied.push_back(heap_.front());
    std::pop_heap(heap_.begin(), heap_.end());
    heap_.pop_back();
  }
  int group = -1;
  for (const Entry& entry : tied) {
    int g = LowestScoring(entry.second, top);
    if (g >= 0 && (group < 0 || g < group)) group = g;
    heap_.push_back(entry);
    std::push_heap(heap_.begin(), heap_.end());
  }
  *score = top;
  return group;
}

int TopGroup::LowestScoring(int key, double score) const {
  const int ca = key / (num_classes_ + 1);
  const int cb = key % (num_classes_ + 1);
  auto scores = [&](int g) {
    double best;
    space_.BestConfig(g, rates_, rule_, &best);
    return best == score;
  };
  if (cb == num_classes_) {
    for (int s : members_[ca]) {
      if (scores(s)) return s;
    }
    return -1;
  }
  // A group of s on one side reaches `score` only if some config of this
  // front does with s's term and the best term on the other side: the
  // front holds, for every config of the two classes (whichever service
  // comes first), one that gives each side at least as much, and a larger
  // term never makes a smaller sum.
  auto reaches = [&](int s, bool side_a) {
    bool found = false;
    space_.ForEachFront(ca, cb, [&](int sa, int sb) {
      double mine =
          rule_.Term(rates_[s], space_.share_utility(s, side_a ? sa : sb));
      double other = side_a ? best_[cb][sb].first : best_[ca][sa].first;
      found = found || mine + other >= score;
    });
    return found;
  };
  std::vector<int> side_b;
  for (int s : members_[cb]) {
    if (reaches(s, false)) side_b.push_back(s);
  }
  int group = -1;
  for (int a : members_[ca]) {
    if (!reaches(a, true)) continue;
    for (int b : side_b) {
      if (a == b) continue;
      int g = space_.GroupOf(a, b);
      if ((group < 0 || g < group) && scores(g)) group = g;
    }
  }
  return group;
}

}  // namespace migserve::optimizer
