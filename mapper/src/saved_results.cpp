#include "mapper/saved_results.hpp"

#include <stdexcept>

namespace fetta::mapper {

void SavedResults::queue(const Op& descriptor, const Op& read, bool early) {
  pending_.push_back({descriptor, early ? static_cast<int64_t>(reads_.size()) : -1});
  read_early_.push_back(false);
  reads_.push_back(read);
}

std::vector<int64_t> SavedResults::push_pending(OpStream& s, int32_t report, Account account) {
  std::vector<int64_t> early;
  for (Pending p : pending_) {
    p.descriptor.report = report;
    p.descriptor.account = account;
    s.op(p.descriptor);
    if (p.early_read >= 0) early.push_back(p.early_read);
  }
  pending_.clear();
  return early;
}

void SavedResults::read_early(OpStream& s, const std::vector<int64_t>& early, int32_t into, int32_t report) {
  s.op({.code = OpCode::wait_dma_idle, .report = report});
  for (int64_t i : early) {
    s.op(host_read(reads_[static_cast<size_t>(i)], into, report));
    read_early_[static_cast<size_t>(i)] = true;
  }
}

void SavedResults::defer_result(int32_t report, int32_t z, Convert convert, int shift) {
  deferred_.insert(deferred_.end(), reads_.begin(), reads_.end());
  reads_.clear();
  read_early_.clear();
  deferred_.push_back({.code = OpCode::check, .convert = convert, .report = report, .tensor = z, .shift = shift});
  deferred_.push_back({.code = OpCode::finish, .report = report});
}

void SavedResults::end_layer(OpStream& s) {
  if (deferred_.empty()) {
    if (!pending_.empty()) throw std::logic_error("internal: DMA saves pending with nothing to read them");
    return;
  }
  const int32_t r = deferred_.back().report;
  if (!pending_.empty()) {
    s.flip(r, Account::store);
    s.program().steps[static_cast<size_t>(r)].store_predicted += 1;
    push_pending(s, r, Account::store);
  }
  s.op({.code = OpCode::wait_dma_idle, .account = Account::store, .report = r});
  for (const Op& o : deferred_) s.op(o);
  deferred_.clear();
}

void SavedResults::keep(int32_t t, int32_t producer, Convert convert, int shift, bool shared, bool checked) {
  Fetch& f = fetch_[t] = {producer, convert, shift, {}, shared, std::move(reads_), checked};
  for (size_t i = 0; i < f.all.size(); ++i)
    if (!read_early_[i]) f.reads.push_back(f.all[i]);
  reads_.clear();
  read_early_.clear();
}

// A saved intermediate's rows need every save done: the last job's waits for a FLIP, so a FLIP pair
// lends the host its half meanwhile (the second FLIP waits for the save and puts the halves back, so
// every later job's half stays as planned). Then the producer's check and end, which needed the
// words. At the hoist point the saves the reads need are pushed by then, and their cycles are that
// GEMM's step's.
void SavedResults::fetch(OpStream& s, int32_t t, int32_t report, bool overlap, bool gathered) {
  const auto it = fetch_.find(t);
  if (const auto again = again_.find(t); it == fetch_.end() && again != again_.end()) {
    if (gathered) return;  // in DRAM long since
    return fetch_again(s, again->second, report);
  }
  if (it == fetch_.end()) return s.op({.code = OpCode::fetch, .report = report, .tensor = t});
  const Fetch& f = it->second;
  // The producer's STORE cycles, unless it finished already (kept on chip too): then the reader's.
  const int32_t owner = f.checked ? report : f.producer;
  std::vector<Op> ops;
  if (!overlap && !pending_.empty()) {
    s.push(arch::encode_flip(s.isa()), owner, Account::store, 1);
    push_pending(s, owner, Account::store);
    s.push(arch::encode_flip(s.isa()), owner, Account::store, 1);
    s.program().steps[static_cast<size_t>(owner)].store_predicted += 2;
    s.flip_pair_pushed();
    // The FLIPs' cycles are the owner's; a gather waits for nothing else (the DMA runs in order).
    if (gathered) s.op({.code = OpCode::wait_idle, .account = Account::store, .report = owner});
  }
  if (gathered) return defer_check(t, it);
  if (overlap) {
    ops.push_back({.code = OpCode::wait_dma_idle, .report = s.hoist_report()});
  } else {
    ops.push_back({.code = OpCode::wait_dma_idle, .account = Account::store, .report = owner});
    ops.push_back({.code = OpCode::wait_idle, .account = Account::store, .report = owner});  // the FLIPs' cycles are its
  }
  for (const Op& rd : f.reads) ops.push_back(host_read(rd, t, overlap ? s.hoist_report() : report));
  keep_reads_again(t, f, report);
  check_and_finish(t, f, ops);
  if (overlap) {
    s.insert_at_hoist(ops);
  } else {
    for (const Op& o : ops) s.op(o);
  }
  fetch_.erase(it);
}

// A gathered intermediate: the scoreboard reads its saved rows (untimed) and checks them once every
// save is done, at the layer's end (one kept on chip too was checked there: its saved rows are not
// read, and their bytes are no step's); a later network's reader that cannot gather reads them again.
void SavedResults::defer_check(int32_t t, std::map<int32_t, Fetch>::iterator it) {
  const Fetch& f = it->second;
  if (!f.checked)  // else checked on chip, its step finished
    for (Op rd : f.all) {
      rd.tensor = t;
      deferred_.push_back(rd);
    }
  keep_reads_again(t, f, f.producer);
  check_and_finish(t, f, deferred_);
  fetch_.erase(it);
}

// A shared intermediate's every saved row, read again by later networks' readers (for step
// `report`, which fetch_again re-reports); the save's bytes are counted once.
void SavedResults::keep_reads_again(int32_t t, const Fetch& f, int32_t report) {
  if (!f.shared) return;
  for (const Op& rd : f.all) {
    Op again = host_read(rd, t, report);
    again.source = t;
    again_[t].push_back(again);
  }
}

// The producer's check of intermediate t and its end, unless it was checked on chip already.
void SavedResults::check_and_finish(int32_t t, const Fetch& f, std::vector<Op>& ops) {
  if (f.checked) return;
  ops.push_back({.code = OpCode::check, .convert = f.convert, .report = f.producer, .tensor = t, .shift = f.shift});
  ops.push_back({.code = OpCode::finish, .report = f.producer});
}

// Read again for `report`, while the last GEMM pushed computes where there is one (the rows have
// been in DRAM long since).
void SavedResults::fetch_again(OpStream& s, const std::vector<Op>& reads, int32_t report) {
  const bool early = s.hoisting();
  std::vector<Op> ops;
  if (early) ops.push_back({.code = OpCode::wait_dma_idle, .report = s.hoist_report()});  // the DRAM is the DMA's till then
  for (Op rd : reads) {
    rd.report = early ? s.hoist_report() : report;
    ops.push_back(rd);
  }
  if (early) return s.insert_at_hoist(ops);
  for (const Op& o : ops) s.op(o);
}

// A read of saved rows (queue makes it the scoreboard's) as the host's own, timed like a fetch: into
// tensor t, its cycles and DRAM traffic step `report`'s.
Op SavedResults::host_read(Op rd, int32_t t, int32_t report) {
  rd.account = Account::compute;
  rd.host_counted = true;
  rd.report = report;
  rd.tensor = t;
  return rd;
}

}  // namespace fetta::mapper
