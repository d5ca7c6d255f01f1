// The DMA descriptor (arch/dma.hpp): the default geometry, the encoding round trip, the refusals
// (each naming the field and the allowed range) and the reference expansion into beats.
#include <catch2/catch.hpp>

#include <string>

#include "arch/dma.hpp"

using namespace fetta::arch;

TEST_CASE("DMA geometry of the default configuration", "[arch][dma]") {
  const ArchConfig c = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
  const DmaGeometry g = dma_geometry(c);
  CHECK(g.row_bits == 11);   // 2048 rows per half
  CHECK(g.group_bits == 2);  // 16 banks, 4 per host beat
  CHECK(g.lanes == 16);
  CHECK(g.width == 16);
  CHECK(g.beat_bytes() == 32);
  CHECK(g.dram_beat_bits() == 27);
  const DmaLayout l(g);
  CHECK(l.bits() == 1 + 1 + 27 + 13 + 3 * 16 + 3 * 27 + 3 * 13 + 16 + 4);
  CHECK(l.words() == 8);
}

TEST_CASE("DMA descriptors round-trip through their words", "[arch][dma]") {
  const ArchConfig c = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
  const DmaLayout l(dma_geometry(c));
  DmaDescriptor d;
  d.to_dram = true;
  d.half = true;
  d.dram_base = (uint64_t{1} << 27) - 1;
  d.slot_base = 8191;
  d.bound = {65536, 3, 1};
  d.dram_stride = {1, -4, 0};
  d.slot_stride = {4, -1, 7};
  d.lane_mask = 0x8001;
  const Words w = encode_dma(l, d);
  REQUIRE(w.size() == 8);
  const DmaDescriptor back = decode_dma(l, w);
  CHECK(back.to_dram);
  CHECK(back.half);
  CHECK(back.dram_base == d.dram_base);
  CHECK(back.slot_base == d.slot_base);
  CHECK(back.bound == d.bound);
  CHECK(back.dram_stride[1] == static_cast<int64_t>((uint64_t{1} << 27) - 4));  // two's complement in 27 bits
  CHECK(back.slot_stride[1] == 8191);
  CHECK(back.lane_mask == 0x8001);
  CHECK(encode_dma(l, back) == w);
  CHECK(describe_dma(l, d).rfind("dma save half=1 dram=0x7ffffff slot=8191 bounds=65536x3x1", 0) == 0);
  CHECK(describe_dma(l, d).find("rot=") == std::string::npos);
  // A load that turns its beats: the turn is the last field, so a descriptor without one encodes as before it.
  d.to_dram = false;
  d.lane_rot = 15;
  const Words turned = encode_dma(l, d);
  REQUIRE(l.bits() == 230);
  CHECK(decode_dma(l, turned).lane_rot == 15);
  CHECK(field_value(turned, l.field("lane_rot")) == 15);
  CHECK(l.field("lane_rot").lsb == 226);
  CHECK(describe_dma(l, d).ends_with(" mask=8001 rot=15"));
  d.lane_rot = 0;
  CHECK(encode_dma(l, d)[7] == (turned[7] & ~(uint32_t{15} << 2)));
  CHECK(dma_unified_lane(l, DmaDescriptor{.lane_rot = 3}, 14) == 1);
}

TEST_CASE("DMA lane turns: a one-lane beat has none", "[arch][dma]") {
  DmaGeometry g{.row_bits = 3, .group_bits = 0, .lanes = 1, .width = 16, .addr_bits = 10};
  const DmaLayout l(g);
  CHECK_FALSE(l.has_lane_rot());
  CHECK_THROWS_WITH(encode_dma(l, DmaDescriptor{.lane_rot = 1}), "dma: lane_rot = 1; allowed: 0 .. 0 (the beat's lanes)");
  CHECK(decode_dma(l, encode_dma(l, DmaDescriptor{})).lane_rot == 0);
}

TEST_CASE("DMA descriptors that do not fit are refused with the field and the range", "[arch][dma]") {
  const ArchConfig c = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
  const DmaLayout l(dma_geometry(c));
  DmaDescriptor d;
  d.slot_base = 8192;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: slot_base = 8192 does not fit its 13 bits; allowed: 0 .. 8191");
  d.slot_base = 0;
  d.bound[2] = 0;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: bound of level 2 = 0; allowed: 1 .. 65536");
  d.bound[2] = 65537;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: bound of level 2 = 65537; allowed: 1 .. 65536");
  d.bound[2] = 1;
  d.dram_base = uint64_t{1} << 27;
  CHECK_THROWS_WITH(encode_dma(l, d), Catch::Contains("dram_base") && Catch::Contains("0 .. 134217727"));
  CHECK_THROWS_WITH(decode_dma(l, Words(3, 0)), "dma: a descriptor is 8 words, not 3");
  d.dram_base = 0;
  d.lane_rot = 16;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: lane_rot = 16; allowed: 0 .. 15 (the beat's lanes)");
  d.lane_rot = -1;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: lane_rot = -1; allowed: 0 .. 15 (the beat's lanes)");
  d.lane_rot = 2;
  d.to_dram = true;
  CHECK_THROWS_WITH(encode_dma(l, d), "dma: lane_rot = 2 on a save; allowed: 0 (only a load turns its beats)");
  d = DmaDescriptor{};
  DmaGeometry g = dma_geometry(c);
  g.lanes = 12;
  CHECK_THROWS_WITH(DmaLayout(g), "DMA geometry: lanes = 12; allowed: a power of two, 1 .. 64");
  g = dma_geometry(c);
  g.addr_bits = 5;
  CHECK_THROWS_WITH(DmaLayout(g), Catch::Contains("addr_bits = 5; allowed: 6 .. 48"));
}

TEST_CASE("DMA beats: the nest in order, wrapping in both address spaces", "[arch][dma]") {
  DmaGeometry g;
  g.row_bits = 2;
  g.group_bits = 1;  // 8 slots
  g.lanes = 4;
  g.width = 8;       // 4-byte beats
  g.addr_bits = 6;   // 16 DRAM beats
  const DmaLayout l(g);
  DmaDescriptor d;
  d.dram_base = 14;
  d.slot_base = 6;
  d.bound = {2, 3, 1};
  d.dram_stride = {1, 4, 0};
  d.slot_stride = {1, -2, 0};
  const std::vector<DmaBeat> want{{14, 6}, {15, 7}, {2, 4}, {3, 5}, {6, 2}, {7, 3}};
  CHECK(dma_beats(l, d) == want);
}
