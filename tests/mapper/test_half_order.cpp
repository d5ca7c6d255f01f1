// The replay of the DMA's descriptors against the controller's FLIPs (mapper/half_order.hpp):
// which waits for the DMA can end in every order the host's timing allows, on hand-made push
// sequences. Half 0 is the TCU's after reset; the DMA's queue holds 2 (the top's).
#include <catch2/catch.hpp>

#include "mapper/half_order.hpp"

using fetta::mapper::HalfOrder;

namespace {
constexpr bool kFlip = true, kOther = false;
constexpr bool kHalf0 = false, kHalf1 = true;
}  // namespace

TEST_CASE("half order: a descriptor for the host's half runs; one for the TCU's waits for a FLIP", "[halforder]") {
  HalfOrder a(2);
  CHECK_FALSE(a.push_descriptor(kHalf1));
  CHECK_FALSE(a.wait_dma_idle());

  HalfOrder b(2);
  CHECK_FALSE(b.push_descriptor(kHalf0));
  const auto stuck = b.wait_dma_idle();
  REQUIRE(stuck);
  CHECK(stuck->descriptor == 0);
  CHECK(stuck->half == kHalf0);

  HalfOrder c(2);  // the same with a FLIP pushed before the wait
  CHECK_FALSE(c.push_descriptor(kHalf0));
  c.push_instruction(kOther);
  c.push_instruction(kFlip);
  CHECK_FALSE(c.wait_dma_idle());
}

TEST_CASE("half order: the queue is in order, so the FLIP that frees its head can strand the next", "[halforder]") {
  // D0 waits for the FLIP; D1 is for the host's half when pushed, but runs only after D0, once
  // the FLIP has made half 1 the TCU's.
  HalfOrder h(2);
  CHECK_FALSE(h.push_descriptor(kHalf0));
  CHECK_FALSE(h.push_descriptor(kHalf1));
  h.push_instruction(kFlip);
  const auto stuck = h.wait_dma_idle();
  REQUIRE(stuck);
  CHECK(stuck->descriptor == 1);
  CHECK(stuck->half == kHalf1);
}

TEST_CASE("half order: a FLIP pushed before a descriptor may have taken effect when it arrives", "[halforder]") {
  // If the FLIP is done first, the descriptor for half 1 is on the TCU's half with no FLIP left.
  HalfOrder h(2);
  h.push_instruction(kFlip);
  CHECK_FALSE(h.push_descriptor(kHalf1));
  CHECK(h.wait_dma_idle());
  // Waiting for the FLIP to retire first makes the order certain: half 0 is then the host's.
  HalfOrder w(2);
  w.push_instruction(kFlip);
  w.wait_retired(1);
  CHECK_FALSE(w.push_descriptor(kHalf0));
  CHECK_FALSE(w.wait_dma_idle());
  w.wait_idle();
  CHECK_FALSE(w.push_descriptor(kHalf1));
  CHECK(w.wait_dma_idle());
}

TEST_CASE("half order: a push into the full queue waits for its head", "[halforder]") {
  HalfOrder h(2);
  CHECK_FALSE(h.push_descriptor(kHalf0));
  CHECK_FALSE(h.push_descriptor(kHalf0));
  const auto stuck = h.push_descriptor(kHalf1);
  REQUIRE(stuck);
  CHECK(stuck->descriptor == 0);
  // A deeper queue takes the third; the wait still cannot end.
  HalfOrder d(4);
  CHECK_FALSE(d.push_descriptor(kHalf0));
  CHECK_FALSE(d.push_descriptor(kHalf0));
  CHECK_FALSE(d.push_descriptor(kHalf1));
  CHECK(d.wait_dma_idle());
  // With a FLIP between, the two for half 0 run after it and the third waits for another.
  HalfOrder f(2);
  CHECK_FALSE(f.push_descriptor(kHalf0));
  CHECK_FALSE(f.push_descriptor(kHalf0));
  f.push_instruction(kFlip);
  CHECK_FALSE(f.push_descriptor(kHalf1));
  f.push_instruction(kFlip);
  CHECK_FALSE(f.wait_dma_idle());
}
