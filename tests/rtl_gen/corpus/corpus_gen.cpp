// Emits the corpus into <out>/<top>/ so the build can Verilate each top.
#include <cstdio>

#include "corpus.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_gen OUT_DIR\n");
    return 2;
  }
  using namespace corpus;
  std::string out = argv[1];
  auto emit = [&](const GeneratorBase& g) {
    Design d;
    auto m = d.elaborate(g);
    write_design(d, m->name(), std::filesystem::path(out) / m->name());
  };
  emit(Fifo({8, 4}));
  emit(Fifo({5, 3}));
  emit(AdderTree({8, 8}));
  emit(ShiftReg({8, 3}));
  emit(SeqDetect({0b1011, 4}));
  emit(DualPortRam({16, 32}));
  for (ClockGating g : {ClockGating::cells, ClockGating::enables}) {
    Design d(View::synthesis, g);
    auto m = d.elaborate(GatedRegs(to_string(g)));
    write_design(d, m->name(), std::filesystem::path(out) / m->name());
  }
  emit(Counter(4));
  emit(SignedMath(0));
  emit(CommandFsm(0));
  return 0;
}
