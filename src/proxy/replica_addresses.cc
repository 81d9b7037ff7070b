#include "proxy/replica_addresses.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "boundary/csv_file.h"

namespace migserve::proxy {
namespace {

// The field as a whole number from `min` to `max`, written in digits (a
// port of "1e3" or "0x50" is a typo or a trick, not 1000 or 80).
StatusOr<int> Whole(const CsvFile& csv, const CsvRecord& row, int column,
                    int min, int max) {
  MIGSERVE_ASSIGN_OR_RETURN(
      double value, csv.Number(row, column, {double(min), double(max)}));
  const std::string& text = csv.Field(row, column);
  bool digits = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '-';
  });
  if (value != std::floor(value) || !digits) {
    return csv.Error(row, column, "must be a whole number");
  }
  return static_cast<int>(value);
}

}  // namespace

StatusOr<ReplicaBackends> ParseReplicaAddresses(const std::string& text,
                                                const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile csv, CsvFile::Parse(text, source));
  int columns[6];
  const char* names[6] = {"service", "node", "gpu", "start", "address", "port"};
  for (int i = 0; i < 6; ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(columns[i], csv.Require(names[i]));
  }
  int grpc = csv.Find("grpc_port");
  ReplicaBackends out;
  for (const CsvRecord& row : csv.Rows()) {
    MIGSERVE_ASSIGN_OR_RETURN(std::string service,
                              csv.PlainName(row, columns[0]));
    MIGSERVE_ASSIGN_OR_RETURN(std::string node, csv.PlainName(row, columns[1]));
    MIGSERVE_ASSIGN_OR_RETURN(int gpu, Whole(csv, row, columns[2], 0, 1 << 20));
    MIGSERVE_ASSIGN_OR_RETURN(int start, Whole(csv, row, columns[3], 0, 64));
    std::string address = csv.Field(row, columns[4]);
    MIGSERVE_ASSIGN_OR_RETURN(int port, Whole(csv, row, columns[5], 1, 65535));
    StatusOr<Endpoint> http = Endpoint::Parse(address, port);
    if (!http.ok()) {
      return csv.Error(row, columns[4], "must be an IP address or host name");
    }
    ProxyBackend backend{*http};
    if (grpc >= 0 && !csv.Field(row, grpc).empty()) {
      MIGSERVE_ASSIGN_OR_RETURN(int grpc_port, Whole(csv, row, grpc, 1, 65535));
      MIGSERVE_ASSIGN_OR_RETURN(backend.grpc, http->AtPort(grpc_port));
    }
    if (!out.by_site
             .emplace(ReplicaBackends::Site{service, {{node, gpu}, start}},
                      backend)
             .second) {
      return csv.Error(row, columns[0],
                       fmt::format("{} at {} GPU {} start {} is listed twice",
                                   service, node, gpu, start));
    }
  }
  return out;
}

}  // namespace migserve::proxy
