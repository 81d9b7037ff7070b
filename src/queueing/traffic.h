// How a service's requests reach one of its replicas (docs/capacity.md): the
// service's stream (a renewal process of a given coefficient of variation)
// and the router that splits it (router_kind.h). A replica's p99 credit is
// computed for the arrivals it then sees, described by an ArrivalShape, by
// the router kind's spreading:
//   rotation  `router_replicas` proxies, each request reaching one at
//             random, each running smooth weighted round robin over every
//             replica (weights = credits): a replica with a share 1/k of the
//             stream takes every k-th request of each proxy (router proxy);
//   thinning  each request to a replica, or to a group then one of its
//             replicas, picked at random by weight: the replica's share of
//             the stream, thinned at random. For gateway-api (one weighted
//             backend per group, then round robin or least request inside
//             the group) it is the bound that holds for a group of any size,
//             a group of one (routers gateway-api and random).
#ifndef MIGSERVE_QUEUEING_TRAFFIC_H_
#define MIGSERVE_QUEUEING_TRAFFIC_H_

#include <compare>

#include "queueing/router_kind.h"

namespace migserve::queueing {

struct Traffic {
  double service_rate = 0;  // req/s the replicas share (0: the replica alone)
  double cv = 1;            // of the gaps between the service's requests
  RouterKind router{};      // proxy
  int router_replicas = 1;  // proxies (Spreading::kRotation)
  auto operator<=>(const Traffic&) const = default;
};

// The arrivals one replica sees: the service's stream with gaps of `cv`,
// each request kept with probability 1 / `thin`, the kept ones spread at
// random over `channels` proxies, each giving the replica every `every`-th
// of its requests (from a random phase).
struct ArrivalShape {
  double cv = 1;
  int thin = 1;
  int channels = 1;
  int every = 1;
  auto operator<=>(const ArrivalShape&) const = default;
};

// The shape a replica receiving `rate` of `traffic` sees. A replica's share
// of its service's stream is at most rate / service_rate (weights are
// credits, and credits cover the service's rate); smooth weighted round
// robin keeps its count within one of that share, and the shape takes every
// k-th request for the largest k of 1-16, 18-32 by 2, 36-64 by 4 at most
// service_rate / rate (docs/capacity.md).
// Random thinning is rounded the same way, towards the burstier side: a
// Poisson stream thinned stays Poisson, so thinning counts only for cv != 1.
ArrivalShape ShapeAt(const Traffic& traffic, double rate);

// `traffic` as a replica sees it when its router picks a replica for each
// request on its own (least connections, as the proxy routes an OpenAI
// service, or at random): its share of the stream with no rotation to
// smooth it (Spreading::kThinning whatever the router's), so that a credit
// searched for it holds in a pool of any size, a pool of one after a loss
// included (issue 93: a rotation's credit grew with the pool).
Traffic PickedPerRequest(Traffic traffic);

// The long-run variance of the count of `shape`'s arrivals over its mean
// (1: Poisson): thinning at random takes a stream's toward 1, taking every
// k-th divides it by k, and merging channels keeps it.
double DispersionIndex(const ArrivalShape& shape);

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_TRAFFIC_H_
