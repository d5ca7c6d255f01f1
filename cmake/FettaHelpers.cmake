# Shared build settings for every fetta target.

# Warnings for the project's own code. Third-party and Verilator-generated code is compiled
# with its own flags (see fetta_verilate), so these stay strict.
function(fetta_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
endfunction()

# A library of the project: sources, public include dir <dir>/include, warnings on. EXPORT
# installs it with its headers into the `fetta` CMake package as fetta::<name without fetta_>
# (`cmake --install`; find_package(fetta) in another project, examples/custom_pe/).
function(fetta_library name)
  cmake_parse_arguments(ARG "EXPORT" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  if(ARG_EXPORT)
    string(REGEX REPLACE "^fetta_" "" short ${name})
    set_target_properties(${name} PROPERTIES EXPORT_NAME ${short})
    add_library(fetta::${short} ALIAS ${name})
    install(TARGETS ${name} EXPORT fettaTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
  # Source paths in generated headers and error messages are printed relative to the root.
  target_compile_definitions(${name} PRIVATE FETTA_SOURCE_DIR="${PROJECT_SOURCE_DIR}/")
  fetta_warnings(${name})
endfunction()

# A Catch2 test executable, registered with CTest once per tag group so that labels
# (`ctest -L ce`) select them. TESTS is a list of "name|catch-filter|label[;label]".
function(fetta_catch_tests exe)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;TESTS" ${ARGN})
  add_executable(${exe} ${ARG_SOURCES})
  target_link_libraries(${exe} PRIVATE fetta_catch_main ${ARG_DEPS})
  target_compile_definitions(${exe} PRIVATE FETTA_SOURCE_DIR="${PROJECT_SOURCE_DIR}/")
  fetta_warnings(${exe})
  foreach(spec IN LISTS ARG_TESTS)
    string(REPLACE "|" ";" parts "${spec}")
    list(GET parts 0 tname)
    list(GET parts 1 filter)
    list(GET parts 2 labels)
    string(REPLACE "," ";" labels "${labels}")
    add_test(NAME ${tname} COMMAND ${exe} "${filter}")
    set_tests_properties(${tname} PROPERTIES LABELS "${labels}")
  endforeach()
endfunction()

# Verilator runtime, built once and shared by every Verilated model of the project.
find_package(Threads REQUIRED)
set(FETTA_VERILATOR_INC /usr/share/verilator/include)
add_library(fetta_verilated_rt STATIC
  ${FETTA_VERILATOR_INC}/verilated.cpp ${FETTA_VERILATOR_INC}/verilated_threads.cpp)
target_include_directories(fetta_verilated_rt SYSTEM PUBLIC ${FETTA_VERILATOR_INC} ${FETTA_VERILATOR_INC}/vltstd)
target_link_libraries(fetta_verilated_rt PUBLIC Threads::Threads)
target_compile_options(fetta_verilated_rt PRIVATE -w)

# Verilate RTL that a generator writes at build time (CMake's own `verilate()` runs Verilator
# at configure time, before the RTL exists). TOP is the module and the model prefix V<TOP>;
# DIR holds its .sv files. -Wall with no waivers: a lint warning fails the build.
function(fetta_verilate target)
  cmake_parse_arguments(ARG "SYSTEMC" "TOP;DIR" "ARGS" ${ARGN})
  set(mdir ${CMAKE_CURRENT_BINARY_DIR}/verilated/${ARG_TOP})
  set(lib ${mdir}/V${ARG_TOP}__ALL.a)
  set(mode --cc)
  if(ARG_SYSTEMC)
    set(mode --sc)
  endif()
  add_custom_command(OUTPUT ${lib}
    COMMAND verilator ${mode} -Wall -O3 --x-assign fast --x-initial fast --Mdir ${mdir}
            --prefix V${ARG_TOP} --top-module ${ARG_TOP} -y ${ARG_DIR} ${ARG_ARGS} ${ARG_DIR}/${ARG_TOP}.sv
    COMMAND make -s -C ${mdir} -f V${ARG_TOP}.mk V${ARG_TOP}__ALL.a VM_PARALLEL_BUILDS=1
            OPT_FAST=${FETTA_VERILATED_OPT_FAST} OPT_SLOW=${FETTA_VERILATED_OPT_SLOW} CXX=${CMAKE_CXX_COMPILER}
    DEPENDS ${ARG_DIR}/${ARG_TOP}.sv ${ARG_DIR}/manifest.json
    COMMENT "Verilating ${ARG_TOP}"
    VERBATIM)
  add_custom_target(${target}_V${ARG_TOP} DEPENDS ${lib})
  add_dependencies(${target} ${target}_V${ARG_TOP})
  target_include_directories(${target} SYSTEM PRIVATE ${mdir})
  target_link_libraries(${target} PRIVATE ${lib} fetta_verilated_rt)
  if(ARG_SYSTEMC)
    # Debian's libsystemc is built as C++17; its headers check the including standard.
    target_compile_definitions(${target} PRIVATE SC_CPLUSPLUS=201703L)
    target_link_libraries(${target} PRIVATE systemc)
  endif()
endfunction()

# add_subdirectory() for every child folder that has a CMakeLists.txt (block families).
function(fetta_add_child_directories)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY ${child} AND EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()

# RTL written at build time: `GENERATOR DIR [ARGS...]` emits each of TOPS into DIR/<top>/
# (rtl::write_design). Creates the custom target `name`; fetta_verilate() models and lint tests
# depend on the files. write_design leaves unchanged files alone and Ninja restats custom
# commands, so re-running the generator rebuilds only models whose RTL changed.
function(fetta_generated_rtl name)
  cmake_parse_arguments(ARG "" "GENERATOR;DIR" "TOPS;ARGS;DEPENDS" ${ARGN})
  set(files)
  foreach(top IN LISTS ARG_TOPS)
    # manifest.json carries the hash of every file of the design: models depend on it, so a
    # change in a submodule alone rebuilds them too.
    list(APPEND files ${ARG_DIR}/${top}/${top}.sv ${ARG_DIR}/${top}/manifest.json)
  endforeach()
  add_custom_command(OUTPUT ${files}
    COMMAND ${ARG_GENERATOR} ${ARG_DIR} ${ARG_ARGS}
    DEPENDS ${ARG_GENERATOR} ${ARG_DEPENDS}
    COMMENT "Generating ${name}")
  add_custom_target(${name} DEPENDS ${files})
endfunction()

# One `<PREFIX>.lint.<top>` test per top: the emitted DIR/<top>/ through `fetta lint`
# (Verilator -Wall with no waivers, Icarus, Yosys).
function(fetta_lint_tests)
  cmake_parse_arguments(ARG "" "PREFIX;DIR" "TOPS;LABELS" ${ARGN})
  foreach(top IN LISTS ARG_TOPS)
    add_test(NAME ${ARG_PREFIX}.lint.${top} COMMAND fetta lint --dir ${ARG_DIR}/${top} --top ${top})
    set_tests_properties(${ARG_PREFIX}.lint.${top} PROPERTIES LABELS "${ARG_LABELS};lint")
  endforeach()
endfunction()

# A system-simulation executable for one configuration: `fetta gen --part top --view simulation`
# writes the RTL at build time (its behavioural arithmetic, proven equal to the structural view by
# `ctest -L equiv`; files rewritten only when they change; manifest.json carries their hashes), Verilator
# builds the SystemC model once, and sim/system/src/sim_main.cpp links it with fetta_sim_system.
# Creates the executable `target` and sets ${target}_RTL_DIR in the caller's scope.
function(fetta_system_model target)
  cmake_parse_arguments(ARG "" "CONFIG" "" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/rtl/${target})
  set(mdir ${CMAKE_CURRENT_BINARY_DIR}/verilated/${target})
  set(prefix V${target})
  set(lib ${mdir}/${prefix}__ALL.a)
  add_custom_command(OUTPUT ${dir}/manifest.json
    COMMAND $<TARGET_FILE:fetta> gen --config ${ARG_CONFIG} --part top --view simulation --no-lint --out ${dir}
    DEPENDS fetta ${ARG_CONFIG}
    COMMENT "Generating the top of ${ARG_CONFIG}"
    VERBATIM)
  add_custom_command(OUTPUT ${lib}
    COMMAND verilator --sc -Wall -O3 --x-assign fast --x-initial fast --Mdir ${mdir} --prefix ${prefix} -f filelist.f
    COMMAND make -s -C ${mdir} -f ${prefix}.mk ${prefix}__ALL.a VM_PARALLEL_BUILDS=1 OPT_FAST=${FETTA_VERILATED_OPT_FAST} OPT_SLOW=${FETTA_VERILATED_OPT_SLOW}
            CXX=${CMAKE_CXX_COMPILER}
    WORKING_DIRECTORY ${dir}
    DEPENDS ${dir}/manifest.json
    COMMENT "Verilating the top of ${ARG_CONFIG}"
    VERBATIM)
  add_custom_target(${target}_model DEPENDS ${lib})
  add_executable(${target} ${FETTA_SIM_MAIN})
  add_dependencies(${target} ${target}_model)
  target_compile_definitions(${target} PRIVATE FETTA_TOP_HEADER="${prefix}.h" FETTA_TOP_CLASS=${prefix})
  target_include_directories(${target} SYSTEM PRIVATE ${mdir})
  target_link_libraries(${target} PRIVATE ${lib} fetta_sim_system fetta_verilated_rt systemc)
  set(${target}_RTL_DIR ${dir} PARENT_SCOPE)
  set(${target}_MODEL_DIR ${mdir} PARENT_SCOPE)
  set(${target}_MODEL_LIB ${lib} PARENT_SCOPE)
endfunction()

# Another executable on the Verilated model of fetta_system_model(MODEL): a test with its own
# sc_main (FETTA_TOP_HEADER / FETTA_TOP_CLASS name the model), no second Verilator build.
function(fetta_system_model_test target)
  cmake_parse_arguments(ARG "" "MODEL" "SOURCES;DEPS" ${ARGN})
  add_executable(${target} ${ARG_SOURCES})
  add_dependencies(${target} ${ARG_MODEL}_model)
  target_compile_definitions(${target} PRIVATE FETTA_TOP_HEADER="V${ARG_MODEL}.h" FETTA_TOP_CLASS=V${ARG_MODEL})
  target_include_directories(${target} SYSTEM PRIVATE ${${ARG_MODEL}_MODEL_DIR})
  target_link_libraries(${target} PRIVATE ${${ARG_MODEL}_MODEL_LIB} ${ARG_DEPS} fetta_sim_system fetta_verilated_rt systemc)
  fetta_warnings(${target})
endfunction()
