// The compiler's options as command-line flags (ProgramOptions, the phases): their names,
// defaults, allowed values and help, declared once for every front end that compiles.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "mapper/compile.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

struct CompileFlags {
  std::string phases = "fp,bp,wg";
  std::string map_for = "fastest";
  bool through_host = false;
  bool terms_separately = false;
  bool dma = true;
  bool reuse = true;
  bool shared_on_chip = true;
  bool gather = true;
  std::string network_order = "fastest";

  ProgramOptions options() const {
    return {parse_map_for(map_for), through_host,  terms_separately, dma, reuse, parse_network_order(network_order),
            shared_on_chip, gather};
  }
  std::vector<verif::Phase> phase_list() const { return parse_phases(phases); }
};

// Adds --phases, --map-for, --through-host, --terms-separately, --dma/--no-dma, --reuse/--no-reuse,
// --shared-on-chip/--no-shared-on-chip, --gather/--no-gather and --network-order to `app`; returns them, so that a front
// end can exclude them from an option that replaces compiling (a compiled program).
inline std::vector<CLI::Option*> add_compile_flags(CLI::App& app, CompileFlags& f) {
  return {
      app.add_option("--phases", f.phases, "Comma-separated training phases: fp, bp, wg")->capture_default_str(),
      app.add_option("--map-for", f.map_for,
                     "What each contraction's mapping minimizes: compute (the model's cycles, which the RTL matches; "
                     "data movement breaks ties), end-to-end (cycles plus the STORE or host and DRAM cycles it implies) "
                     "or fastest (the program mapped both ways, the shorter by the wall-cycle model; the default, it compiles twice)")
          ->check(CLI::IsMember({"compute", "end-to-end", "fastest"}))
          ->capture_default_str(),
      app.add_flag("--through-host", f.through_host,
                   "Send every intermediate through the host and DRAM instead of keeping it on chip with STORE"),
      app.add_flag("--terms-separately", f.terms_separately,
                   "Sums of terms (BT layers): read and check every term on its own instead of summing in the "
                   "accumulator"),
      app.add_flag("--dma,!--no-dma", f.dma,
                   "Load the layers' inputs and weights through the DMA engine, pre-tiled in DRAM, while the job before "
                   "computes (docs/dma.md; the default); --no-dma: through the host's port, like intermediates"),
      app.add_flag("--reuse,!--no-reuse", f.reuse,
                   "Compute a contraction that an earlier network of the layer computes too only once, keeping its "
                   "result in DRAM for every network that reads it (the default); --no-reuse: every network contracts "
                   "on its own"),
      app.add_flag("--shared-on-chip,!--no-shared-on-chip", f.shared_on_chip,
                   "On the DMA path, let a result that later networks read too also stay on chip for its next reader "
                   "(STOREd into its images and saved), where the wall-cycle model finds the program shorter (the "
                   "default); --no-shared-on-chip: such results stay in DRAM for all their readers"),
      app.add_flag("--gather,!--no-gather", f.gather,
                   "On the DMA path, save intermediates in their readers' layouts or bring them back by DMA gathers "
                   "straight into their readers' operand images, so that the host moves no tensor element (docs/dma.md "
                   "§2, §5; the default); --no-gather: the host reads them from DRAM and writes the images, permuting "
                   "them at no cost (a comparison: a real host cannot)"),
      app.add_option("--network-order", f.network_order,
                     "The order of the layer's networks: sequential (each to its end), interleaved (step by step in "
                     "turns, two at a time, so the host prepares one while another computes) or fastest (whichever the "
                     "wall-cycle model predicts shorter; docs/program.md)")
          ->check(CLI::IsMember({"sequential", "interleaved", "fastest"}))
          ->capture_default_str(),
  };
}

}  // namespace fetta::mapper
