// GTKWave's FST library (reader and writer) exactly as Verilator's verilated_fst_c.cpp builds it.
// Never link this into a traced Verilated model, which already contains it.
#define FST_CONFIG_INCLUDE "fst_config.h"
#include "gtkwave/fastlz.c"
#include "gtkwave/fstapi.c"
#include "gtkwave/lz4.c"
