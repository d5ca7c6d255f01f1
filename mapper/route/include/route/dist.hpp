// The distribution network (memory banks -> CE inputs): its control, a functional model and the
// router. Stage order from input to output: the transpose level, then butterfly levels 0, 1, ...,
// L-1 (level k: every lane i is a 2:1 mux of lane i ("vertical") and lane i ^ 2^k ("diagonal")).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "route/geometry.hpp"

namespace fetta::route {

// The full control word: one bit per mux.
struct DistControl {
  std::vector<uint8_t> transpose;           // [N]: 1 = lane i takes lane partner(i)
  std::vector<std::vector<uint8_t>> level;  // [L][N]: 1 = at level k lane i takes lane i ^ 2^k

  static DistControl zero(const NetGeometry& g);  // every mux vertical: the identity
  bool operator==(const DistControl&) const = default;
};

// The controller's cheap control (ARCHITECTURE 4.6): per level k the mux bit of lane i is
//   sel_vec[k] ^ (idx_mask[k] & bit k of i),
// and `transpose` drives every transpose mux. idx_mask[k] = 0: every lane of level k does the
// same (sel_vec[k] = 1 swaps the halves); idx_mask[k] = 1: both lanes of a pair take the lane
// whose bit k equals sel_vec[k] (a broadcast along bit k). Per bit k of the source lane:
//   src_k = idx_mask[k] ? sel_vec[k] : (o_k ^ sel_vec[k]), then the transpose if set.
struct DistCheapControl {
  uint32_t sel_vec = 0;
  uint32_t idx_mask = 0;
  bool transpose = false;
  bool operator==(const DistCheapControl&) const = default;
};

DistControl expand(const NetGeometry& g, const DistCheapControl& c);

// Functional model: the output lanes for the given inputs (any element type, as bit patterns).
std::vector<uint64_t> simulate_dist(const NetGeometry& g, const DistControl& c, const std::vector<uint64_t>& in);
// Which input lane each output lane receives under `c`.
std::vector<int> dist_sources(const NetGeometry& g, const DistControl& c);

// A requested pattern: output lane o takes input lane map[o]; -1: don't care. Any mix of
// permutation, shift, multicast (one input to many outputs) and transposition.
using LaneMap = std::vector<int>;

// Why a pattern is blocked: two outputs whose paths need the same mux output (node) of one
// stage to carry different inputs. stage = -1: the transpose level; k >= 0: butterfly level k.
struct DistConflict {
  int stage = 0;
  int node = 0;  // the lane of that stage's output both paths need
  int out_a = 0, in_a = 0;
  int out_b = 0, in_b = 0;
};

struct DistRoute {
  bool routable = false;
  DistControl control;                   // routable: muxes no path uses are 0 (vertical)
  std::optional<DistConflict> conflict;  // blocked: the first conflict without transposing
  std::string message;                   // blocked: the reason, naming lanes and stage
};

// Exact: finds a control word iff one exists (butterfly paths are unique, and the choice of
// transposing each request or not is a 2-SAT problem). Throws std::invalid_argument for a map
// of the wrong size or with lanes out of range.
DistRoute route_dist(const NetGeometry& g, const LaneMap& map);
// The same, throwing RouteError with the reason when the pattern is blocked.
DistControl route_dist_or_throw(const NetGeometry& g, const LaneMap& map);
// The cheap control word carrying `map`, if any (exact; O(N log N)).
std::optional<DistCheapControl> route_dist_cheap(const NetGeometry& g, const LaneMap& map);

// True iff `sources` (as from dist_sources) meets `map` on every cared output.
bool satisfies(const LaneMap& map, const std::vector<int>& sources);

}  // namespace fetta::route
