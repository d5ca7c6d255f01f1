// Saved intermediates in their readers' layouts (mapper/pretiled_results.hpp).
#include "mapper/pretiled_results.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "arch/isa.hpp"
#include "mapper/dma_transfers.hpp"
#include "mapper/movement.hpp"

namespace fetta::mapper {

PretiledResults::PretiledResults(const arch::ArchConfig& cfg) : cfg_(cfg), geometry_(arch::dma_geometry(cfg)) {}

int64_t PretiledResults::Plan::staging_rows(size_t chunk) const {
  int64_t n = 0;
  for (const Piece& pc : chunks.at(chunk)) n += static_cast<int64_t>(pc.rows.size());
  return n;
}

std::vector<std::vector<uint64_t>> PretiledResults::beat_masks(const std::vector<std::vector<bool>>& lanes) const {
  const auto H = static_cast<size_t>(geometry_.lanes);
  std::vector<std::vector<uint64_t>> out;
  for (const std::vector<bool>& row : lanes) {
    std::vector<uint64_t> m((row.size() + H - 1) / H, 0);
    for (size_t l = 0; l < row.size(); ++l)
      if (row[l]) m[l / H] |= uint64_t{1} << (l % H);
    for (uint64_t& b : m)
      if (H < 64 && b == (uint64_t{1} << H) - 1) b = ~uint64_t{0};  // every lane: the mask image_load gives
    out.push_back(std::move(m));
  }
  return out;
}

uint64_t PretiledResults::Plan::load_bytes(const arch::DmaGeometry& g) const {
  uint64_t bytes = 0;
  for (const auto& pieces : chunks)
    for (const Piece& pc : pieces) {
      const Reader& rd = readers[pc.reader];
      const auto users = static_cast<uint64_t>(std::count(rd.image_of.begin(), rd.image_of.end(), pc.job));
      const int64_t per_row = image_beats_per_row(g, image_shape(rd.gemm, rd.as_a, pc.job).lanes);
      bytes += users * static_cast<uint64_t>(static_cast<int64_t>(pc.rows.size()) * per_row * g.beat_bytes());
    }
  return bytes;
}

std::string PretiledResults::Plan::describe() const {
  int64_t rows = 0, pieces = 0;
  for (size_t k = 0; k < chunks.size(); ++k) {
    rows += staging_rows(k);
    pieces += static_cast<int64_t>(chunks[k].size());
  }
  std::vector<std::string> as;
  for (const Reader& rd : readers) as.push_back(rd.as_a ? "A" : "B");
  return fmt::format("{} rows of its {} images (as {}) in {} pieces, packed by STOREs of {} cycles, loaded back by row "
                     "copies", rows, readers.size() > 1 ? fmt::format("{} readers'", readers.size()) : "reader's",
                     fmt::join(as, ", "), pieces, store_cycles);
}

bool PretiledResults::add_reader(Plan& pl, size_t r, uint32_t shift, std::string& why) const {
  Reader& rd = pl.readers[r];
  const CompiledGemm& p = pl.producer;
  const CompiledGemm& c = rd.gemm;
  const arch::IsaLayout isa(cfg_);
  std::map<std::array<int64_t, 2>, size_t> b_first;  // B images shared by jobs over M: saved once
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    if (!rd.as_a) {
      const auto [it, fresh] = b_first.try_emplace(b_image(c.jobs[j]), j);
      rd.image_of.push_back(it->second);
      if (!fresh) continue;
    } else {
      rd.image_of.push_back(j);
    }
    std::vector<ChunkRows> rows;
    if (std::string w = image_rows_by_chunk(p, c, rd.as_a, j, rows); !w.empty()) {
      why = fmt::format("its reader's job {} image cannot be saved pre-tiled: {}", j, w);
      return false;
    }
    const std::vector<StorePlan> pieces = plan_store_pieces(cfg_, p, c, rd.as_a, j, shift, rows);
    for (size_t k = 0; k < rows.size(); ++k) {
      if (rows[k].rows.empty()) continue;
      const StorePlan& sp = pieces[k];
      if (!sp.ok()) {
        why = fmt::format("no STORE packs its reader's job {} image rows of output chunk {}: {}", j, k, sp.why_not);
        return false;
      }
      if (!cfg_.memory.store_reorder && changes_layout(cfg_, sp)) {
        why = "packing its reader's image changes the layout, and this configuration reorders only through DRAM";
        return false;
      }
      pl.store_cycles += sp.predicted_cycles + static_cast<int64_t>(sp.program.size()) * isa.words();
      pl.chunks[k].push_back({r, j, std::move(rows[k].rows), beat_masks(rows[k].lanes), pl.staging_rows(k), std::nullopt});
    }
  }
  return true;
}

std::optional<PretiledResults::Plan> PretiledResults::plan(
    const CompiledGemm& p, const std::vector<std::pair<const CompiledGemm*, bool>>& readers, uint32_t shift,
    std::string& why) const {
  Plan pl{p, {}, std::vector<std::vector<Piece>>(output_chunks(p).size()), 0};
  for (const auto& [c, as_a] : readers) pl.readers.push_back({*c, as_a, {}});
  for (size_t r = 0; r < pl.readers.size(); ++r)
    if (!add_reader(pl, r, shift, why)) return std::nullopt;
  const int64_t half = cfg_.memory.unified_depth / 2;
  for (size_t k = 0; k < pl.chunks.size(); ++k)
    if (pl.staging_rows(k) > half) {
      why = fmt::format("output chunk {} holds {} rows of its readers' images, more than a half's {}", k,
                        pl.staging_rows(k), half);
      return std::nullopt;
    }
  return pl;
}

void PretiledResults::made(int32_t t) {
  if (!current_) throw std::logic_error("internal: a pre-tiled intermediate with no plan");
  for (const auto& pieces : current_->chunks)
    for (const Piece& pc : pieces)
      if (!pc.at) throw std::logic_error("internal: a pre-tiled piece never saved");
  saved_.emplace(t, std::move(*current_));
  current_.reset();
}

std::optional<size_t> PretiledResults::reader_of(int32_t t, const CompiledGemm& c, bool as_a) const {
  const auto it = saved_.find(t);
  if (it == saved_.end()) return std::nullopt;
  const std::vector<Reader>& readers = it->second.readers;
  for (size_t r = 0; r < readers.size(); ++r) {
    const CompiledGemm& g = readers[r].gemm;
    if (readers[r].as_a != as_a || g.jobs.size() != c.jobs.size() || g.describe() != c.describe()) continue;
    bool same = true;
    for (size_t j = 0; same && j < c.jobs.size(); ++j) {
      const ImageShape a = image_shape(c, as_a, j), b = image_shape(g, as_a, j);
      same = a.rows == b.rows && a.lanes == b.lanes;
    }
    if (same) return r;
  }
  return std::nullopt;
}

std::vector<arch::DmaDescriptor> PretiledResults::loads(int32_t t, size_t r, size_t j, int64_t first_row,
                                                        bool half) const {
  const Plan& pl = saved_.at(t);
  const size_t image = pl.readers.at(r).image_of.at(j);
  std::vector<arch::DmaDescriptor> out;
  for (const auto& pieces : pl.chunks)
    for (const Piece& pc : pieces)
      if (pc.reader == r && pc.job == image)
        for (const arch::DmaDescriptor& d : packed_rows_load(geometry_, first_row, pc.rows, pc.masks, *pc.at, half))
          out.push_back(d);
  return out;
}

}  // namespace fetta::mapper
