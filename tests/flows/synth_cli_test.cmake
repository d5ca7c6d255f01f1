# `fetta synth` from the command line: option errors name the option, and a run on an emitted
# design writes report.json. Run by CTest with -DFETTA= -DRTL= -DOUT= -DCACHE=.
function(expect_failure what pattern)
  execute_process(COMMAND ${FETTA} synth ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${what}: expected a failure, got success:\n${out}${err}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected /${pattern}/ in:\n${out}${err}")
  endif()
endfunction()

expect_failure("unknown target" "--target: unknown target 'vivado'; allowed: asap7, xilinx, ice40"
  --target vivado --rtl ${RTL} --out ${OUT})
expect_failure("no input" "exactly one of --config FILE .* or --rtl DIR" --target asap7 --out ${OUT})
expect_failure("bad ice40 device" "--device: unknown iCE40 device 'xc7'"
  --target ice40 --device xc7 --rtl ${RTL} --out ${OUT})
expect_failure("keep-hierarchy on an FPGA" "--keep-hierarchy: only for --target asap7"
  --target xilinx --keep-hierarchy --rtl ${RTL} --out ${OUT})
expect_failure("missing RTL" "does not exist" --target asap7 --rtl ${OUT}/nope --out ${OUT} --cache-dir ${CACHE})

file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${FETTA} synth --target asap7 --rtl ${RTL} --out ${OUT} --cache-dir ${CACHE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fetta synth failed:\n${out}${err}")
endif()
if(NOT EXISTS ${OUT}/report.json)
  message(FATAL_ERROR "no ${OUT}/report.json")
endif()
file(READ ${OUT}/report.json report)
string(JSON area GET "${report}" modules 0 area_um2)
string(JSON flops GET "${report}" modules 0 flops)
if(NOT area GREATER 0 OR NOT flops EQUAL 4)
  message(FATAL_ERROR "implausible report (area ${area}, flops ${flops}):\n${report}")
endif()
if(NOT out MATCHES "counter_w4 \\*")
  message(FATAL_ERROR "no table printed:\n${out}")
endif()
message(STATUS "fetta synth: counter_w4 ${area} um^2, ${flops} flops")
