# TesseraConfig.cmake - find_package(Tessera CONFIG) for an installed Tessera.
#
# Part of Tessera. `make install PREFIX=<prefix>` (scripts/install.sh) puts this file in
# <prefix>/lib/cmake/Tessera/ and finds everything relative to it, so the installed tree
# may be moved:
#
#   find_package(Tessera CONFIG REQUIRED)     # -DCMAKE_PREFIX_PATH=<prefix> if not standard
#   tessera_add_fpga_executable(stencil
#       SOURCES  stencil.c [more .c/.cpp ...]     # required
#       [MODE    dataflow | tessera | paper | baseline]   # -fplugin-arg-tessera-mode=
#       [TILE    64 64]                             # -fplugin-arg-tessera-tile=64,64
#       [PORT_WIDTH 4 | 8 | 16]                     # -fplugin-arg-tessera-port-width=
#       [BANKS   1 | 2]                             # -fplugin-arg-tessera-banks=
#       [INCLUDE_DIRECTORIES dirs...] [COMPILE_DEFINITIONS defs...]
#       [COMPILE_OPTIONS opts...]                   # default -O2 (later options win)
#       [LINK_OPTIONS opts...]                      # target_link_options(); libraries:
#                                                   # target_link_libraries(<target> PRIVATE m)
#       [OUTPUT_NAME name]                          # default <target>
#       [PLATFORM <file.xpfm | platform name>]      # adds <target>_bitstream
#       [BITSTREAM_TARGET sw_emu | hw_emu | hw])    # default hw
#
# How it builds. The project's own C compiler (often gcc) cannot load the plugin, so
# every source is compiled by a custom command running `<prefix>/bin/tessera cc -c`
# (`tessera c++` for .cpp/.cc/.cxx/.C), i.e. clang-19 -fopenmp with
# -fplugin=<prefix>/lib/tessera_plugin.so, the plugin arguments above and its out-dir
# set to the program's kernel directory, -O2, then the target's INCLUDE_DIRECTORIES,
# COMPILE_DEFINITIONS and COMPILE_OPTIONS (target_include_directories() etc. work on it
# as usual), with a depfile (-MD) so that header changes rebuild the object. <target> is
# an ordinary add_executable() of those objects ($<TARGET_FILE:<target>>,
# target_link_libraries(), install(TARGETS) work), linked by the project's C (C++ when
# a source is C++) compiler with what `tessera cc` adds: Tessera::runtime and clang-19's
# libomp (TESSERA_OPENMP_LIBRARY, from `clang-19 -print-file-name=libomp.so`), both
# on its build and install RPATH. Custom commands and depfiles work alike with the
# Makefile and Ninja generators. The caller's scope and the target carry
#   <target>_KERNEL_DIR   / target property TESSERA_KERNEL_DIR:
#                         ${CMAKE_CURRENT_BINARY_DIR}/<OUTPUT_NAME>.tessera, where the
#                         plugin writes one kernel per offloaded region (<kernel>.cpp,
#                         .manifest.json, .plan.txt)
# Kernel names hash the source path and the region, so CMake code never spells them:
# with PLATFORM, the custom target
# <target>_bitstream runs tessera_add_bitstream(<target>_bitstream KERNELS <kernel dir>
# NAME <OUTPUT_NAME> PLATFORM <p> TARGET <BITSTREAM_TARGET>), which links whatever the
# directory holds after the build into one xclbin for the program,
# <target>_bitstream_XCLBIN = <build>/bitstreams/<BITSTREAM_TARGET>/<OUTPUT_NAME>.xclbin
# (named after the executable, which is how the runtime finds it; not part of `all`: it
# needs AMD Vitis, and hw takes hours; -DTESSERA_BITSTREAM_DRY_RUN=ON only prints the v++
# commands). The plugin removes the
# kernels a source's earlier compilation wrote and this one did not; `make clean` removes
# the directory (an ADDITIONAL_CLEAN_FILES of the target).
#
# At run time the program needs nothing from the build tree: the emulated device's
# kernels are embedded in it (TESSERA_DEVICE=emu), and bitstreams are looked up in
# TESSERA_BITSTREAM_DIR (= <target>_bitstream_BITSTREAM_DIR when PLATFORM is given).
#
# Also defined:
#   Tessera::runtime      imported shared library <prefix>/lib/libtessera_rt.so with the
#                         include directory <prefix>/include/tessera (tessera_rt.h), for
#                         code that calls the runtime's C ABI or links it by hand
#   Tessera::tessera      imported executable <prefix>/bin/tessera
#   TESSERA_EXECUTABLE    <prefix>/bin/tessera (cache; used by tessera_add_bitstream)
#   TESSERA_PLUGIN        <prefix>/lib/tessera_plugin.so, for a plain clang-19 build:
#                         clang-19 -fopenmp -fplugin=${TESSERA_PLUGIN} ... -ltessera_rt
#   TESSERA_INCLUDE_DIR   <prefix>/include/tessera (tessera_rt.h and the HLS shim headers)
#   TESSERA_PREFIX        <prefix>
#   tessera_add_bitstream()   see TesseraBitstream.cmake beside this file
#
# Requires CMake 3.20 (depfiles of custom commands with the Makefile generator).

if(CMAKE_VERSION VERSION_LESS 3.20)
  set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
  set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE "Tessera needs CMake 3.20 or newer")
  return()
endif()

get_filename_component(TESSERA_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

foreach(_tessera_file bin/tessera lib/libtessera_rt.so lib/tessera_plugin.so include/tessera/tessera_rt.h)
  if(NOT EXISTS "${TESSERA_PREFIX}/${_tessera_file}")
    set(${CMAKE_FIND_PACKAGE_NAME}_FOUND FALSE)
    set(${CMAKE_FIND_PACKAGE_NAME}_NOT_FOUND_MESSAGE
        "${TESSERA_PREFIX}/${_tessera_file} is missing: reinstall Tessera (make install PREFIX=...)")
    return()
  endif()
endforeach()

set(TESSERA_PLUGIN "${TESSERA_PREFIX}/lib/tessera_plugin.so")
set(TESSERA_INCLUDE_DIR "${TESSERA_PREFIX}/include/tessera")
set(TESSERA_EXECUTABLE "${TESSERA_PREFIX}/bin/tessera" CACHE FILEPATH
    "The tessera driver (tessera cc, tessera bitstream)")
if(NOT EXISTS "${TESSERA_EXECUTABLE}")
  # A cache entry left by an earlier configure of a tree that has moved since.
  set(TESSERA_EXECUTABLE "${TESSERA_PREFIX}/bin/tessera" CACHE FILEPATH
      "The tessera driver (tessera cc, tessera bitstream)" FORCE)
endif()

if(NOT TARGET Tessera::runtime)
  add_library(Tessera::runtime SHARED IMPORTED)
  set_target_properties(Tessera::runtime PROPERTIES
    IMPORTED_LOCATION "${TESSERA_PREFIX}/lib/libtessera_rt.so"
    # The library has no DT_SONAME: link it as -ltessera_rt, not by its full path.
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${TESSERA_INCLUDE_DIR}")
endif()
if(NOT TARGET Tessera::tessera)
  add_executable(Tessera::tessera IMPORTED)
  set_target_properties(Tessera::tessera PROPERTIES IMPORTED_LOCATION "${TESSERA_EXECUTABLE}")
endif()

# clang-19's OpenMP runtime, which `clang-19 -fopenmp` (and so `tessera cc`) links.
if(NOT TESSERA_OPENMP_LIBRARY)
  find_program(TESSERA_CLANG_EXECUTABLE clang-19 DOC "clang 19 (the compiler `tessera cc` runs)")
  if(TESSERA_CLANG_EXECUTABLE)
    execute_process(COMMAND "${TESSERA_CLANG_EXECUTABLE}" -print-file-name=libomp.so
                    OUTPUT_VARIABLE _tessera_omp OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(IS_ABSOLUTE "${_tessera_omp}" AND EXISTS "${_tessera_omp}")
      get_filename_component(_tessera_omp "${_tessera_omp}" ABSOLUTE)
      set(TESSERA_OPENMP_LIBRARY "${_tessera_omp}" CACHE FILEPATH "clang-19's libomp.so")
    endif()
  endif()
endif()

include("${CMAKE_CURRENT_LIST_DIR}/TesseraBitstream.cmake")

function(tessera_add_fpga_executable target)
  cmake_parse_arguments(PARSE_ARGV 1 TF ""
    "MODE;PORT_WIDTH;BANKS;PLATFORM;BITSTREAM_TARGET;OUTPUT_NAME"
    "SOURCES;TILE;INCLUDE_DIRECTORIES;COMPILE_DEFINITIONS;COMPILE_OPTIONS;LINK_OPTIONS")
  set(_ctx "tessera_add_fpga_executable(${target})")
  if(TF_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${_ctx}: unknown arguments: ${TF_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TF_SOURCES)
    message(FATAL_ERROR "${_ctx}: SOURCES <file.c | file.cpp> ... is required")
  endif()
  if(TF_MODE AND NOT TF_MODE MATCHES "^(dataflow|tessera|paper|baseline)$")
    message(FATAL_ERROR "${_ctx}: MODE must be dataflow, tessera, paper or baseline, not `${TF_MODE}`")
  endif()
  if(TF_PORT_WIDTH AND NOT TF_PORT_WIDTH MATCHES "^(4|8|16)$")
    message(FATAL_ERROR "${_ctx}: PORT_WIDTH must be 4, 8 or 16, not `${TF_PORT_WIDTH}`")
  endif()
  if(TF_BANKS AND NOT TF_BANKS MATCHES "^(1|2)$")
    message(FATAL_ERROR "${_ctx}: BANKS must be 1 or 2, not `${TF_BANKS}`")
  endif()
  foreach(_t IN LISTS TF_TILE)
    if(NOT _t MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "${_ctx}: TILE takes positive sizes (TILE 64 64), not `${_t}`")
    endif()
  endforeach()
  if(TF_BITSTREAM_TARGET AND NOT TF_PLATFORM)
    message(FATAL_ERROR "${_ctx}: BITSTREAM_TARGET needs PLATFORM")
  endif()
  if(NOT TF_OUTPUT_NAME)
    set(TF_OUTPUT_NAME "${target}")
  endif()

  set(_kdir "${CMAKE_CURRENT_BINARY_DIR}/${TF_OUTPUT_NAME}.tessera")
  set(_objdir "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.tessera-objects")
  file(MAKE_DIRECTORY "${_objdir}")

  # Plugin arguments: the same for every source.
  set(_plugin_args "-fplugin-arg-tessera-out-dir=${_kdir}")
  if(TF_MODE)
    list(APPEND _plugin_args "-fplugin-arg-tessera-mode=${TF_MODE}")
  endif()
  if(TF_TILE)
    string(REPLACE ";" "," _tile "${TF_TILE}")
    list(APPEND _plugin_args "-fplugin-arg-tessera-tile=${_tile}")
  endif()
  if(TF_PORT_WIDTH)
    list(APPEND _plugin_args "-fplugin-arg-tessera-port-width=${TF_PORT_WIDTH}")
  endif()
  if(TF_BANKS)
    list(APPEND _plugin_args "-fplugin-arg-tessera-banks=${TF_BANKS}")
  endif()

  # The target's own usage requirements (target_include_directories,
  # target_compile_definitions, target_compile_options, and those of what it links,
  # e.g. Tessera::runtime's include directory) reach the tessera cc command lines.
  set(_inc "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(_def "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(_opt "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>")
  # (Each genex stays one quoted argument: its `;` must not split it before the build.)

  set(_objects "")
  set(_cxx FALSE)
  set(_n 0)
  foreach(_src IN LISTS TF_SOURCES)
    get_filename_component(_abs "${_src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(_name "${_abs}" NAME)
    if(_name MATCHES "\\.(cpp|cc|cxx|C|c\\+\\+)$")
      set(_driver c++)
      set(_cxx TRUE)
    else()
      set(_driver cc)
    endif()
    math(EXPR _n "${_n} + 1")
    set(_obj "${_objdir}/${_n}-${_name}.o")
    add_custom_command(
      OUTPUT "${_obj}"
      COMMAND "${TESSERA_EXECUTABLE}" ${_driver} ${_plugin_args}
              "$<$<BOOL:${_inc}>:-I$<JOIN:${_inc},;-I>>" "$<$<BOOL:${_def}>:-D$<JOIN:${_def},;-D>>"
              -O2 "${_opt}" -MD -MF "${_obj}.d" -c "${_abs}" -o "${_obj}"
      DEPENDS "${_abs}" "${TESSERA_EXECUTABLE}" "${TESSERA_PLUGIN}"
      DEPFILE "${_obj}.d"
      WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
      COMMENT "tessera ${_driver}: ${_src}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    list(APPEND _objects "${_obj}")
  endforeach()
  set_source_files_properties(${_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)

  # Linked by the project's own C (C++) compiler with what `tessera cc` adds: the
  # runtime and clang's OpenMP runtime (libomp), both on the executable's RPATH.
  if(_cxx)
    set(_lang CXX)
  else()
    set(_lang C)
  endif()
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT _lang IN_LIST _langs)
    message(FATAL_ERROR "${_ctx}: the project must enable ${_lang} (project(... LANGUAGES ${_lang})): "
                        "it links the program")
  endif()
  if(NOT TESSERA_OPENMP_LIBRARY)
    message(FATAL_ERROR "${_ctx}: clang-19's OpenMP runtime (libomp.so) was not found: install "
                        "libomp-19-dev, or set -DTESSERA_OPENMP_LIBRARY=/path/to/libomp.so")
  endif()
  add_executable(${target} ${_objects})
  set_target_properties(${target} PROPERTIES
    LINKER_LANGUAGE ${_lang}
    OUTPUT_NAME "${TF_OUTPUT_NAME}"
    TESSERA_KERNEL_DIR "${_kdir}"
    ADDITIONAL_CLEAN_FILES "${_kdir}")
  if(TF_INCLUDE_DIRECTORIES)
    target_include_directories(${target} PRIVATE ${TF_INCLUDE_DIRECTORIES})
  endif()
  if(TF_COMPILE_DEFINITIONS)
    target_compile_definitions(${target} PRIVATE ${TF_COMPILE_DEFINITIONS})
  endif()
  if(TF_COMPILE_OPTIONS)
    target_compile_options(${target} PRIVATE ${TF_COMPILE_OPTIONS})
  endif()
  if(TF_LINK_OPTIONS)
    target_link_options(${target} PRIVATE ${TF_LINK_OPTIONS})
  endif()
  target_link_libraries(${target} PRIVATE Tessera::runtime "${TESSERA_OPENMP_LIBRARY}")
  get_filename_component(_omp_dir "${TESSERA_OPENMP_LIBRARY}" DIRECTORY)
  # Installed with install(TARGETS): keep finding the runtime where Tessera is.
  set_property(TARGET ${target} APPEND PROPERTY BUILD_RPATH "${TESSERA_PREFIX}/lib")
  set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH "${TESSERA_PREFIX}/lib" "${_omp_dir}")
  set(${target}_KERNEL_DIR "${_kdir}" PARENT_SCOPE)

  if(TF_PLATFORM)
    if(NOT TF_BITSTREAM_TARGET)
      set(TF_BITSTREAM_TARGET hw)
    endif()
    tessera_add_bitstream(${target}_bitstream
      KERNELS "${_kdir}"
      NAME "${TF_OUTPUT_NAME}"
      PLATFORM "${TF_PLATFORM}"
      TARGET ${TF_BITSTREAM_TARGET}
      DEPENDS ${target})
    add_dependencies(${target}_bitstream ${target})
    set(${target}_bitstream_BITSTREAM_DIR "${${target}_bitstream_BITSTREAM_DIR}" PARENT_SCOPE)
    set(${target}_bitstream_XCLBIN "${${target}_bitstream_XCLBIN}" PARENT_SCOPE)
  endif()
endfunction()
