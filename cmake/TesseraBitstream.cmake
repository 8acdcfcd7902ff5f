# TesseraBitstream.cmake - build Tessera kernels into FPGA binaries with AMD Vitis.
#
# Part of Tessera. `tessera cc` writes one kernel per offloaded region into
# <output>.tessera/ (<kernel>.cpp + <kernel>.manifest.json); this module links the
# kernels of such a directory into one FPGA binary for the program,
# <OUTPUT_DIR>/<TARGET>/<program>.xclbin (with its build record <program>.xclbin.json),
# by running `tessera bitstream`, which runs `v++ -c` per kernel and one `v++ -l` (see
# bitstreams/README.md for the commands).
#
#   include(TesseraBitstream)   # with <tessera>/cmake on CMAKE_MODULE_PATH, or
#                               # find_package(Tessera CONFIG) (TesseraConfig.cmake)
#   tessera_add_bitstream(<name>
#       KERNELS    <output>.tessera               # every kernel of the directory, or
#       MANIFEST   <dir>/<kernel>.manifest.json   # one kernel; either may be generated at build time
#       PLATFORM   <file.xpfm | platform name>    # required
#       [NAME      <program>]                     # KERNELS: <program>.xclbin (default: <output>)
#       [PER_KERNEL]                              # KERNELS: one xclbin per kernel instead
#       [TARGET    sw_emu | hw_emu | hw]          # default hw
#       [MEMORY    <bank> [<port>=<bank> ...]]    # default DDR[0] for every port
#       [CLOCK_MHZ <n>]                           # default: the platform's clock
#       [CLOCK_KIND scalable | fixed]             # how the link applies CLOCK_MHZ
#       [OUTPUT_DIR <dir>]                        # default ${CMAKE_CURRENT_BINARY_DIR}/bitstreams
#       [DEPENDS <files or targets> ...]          # e.g. the custom command running tessera cc
#       [ALL])                                    # build with `all` (off: hw takes hours)
#
# adds the custom target <name>, and sets in the caller's scope
#   <name>_XCLBIN         the .xclbin the target produces (empty with PER_KERNEL)
#   <name>_BITSTREAM_DIR  <OUTPUT_DIR>/<TARGET>: the value for TESSERA_BITSTREAM_DIR
#
# KERNELS links every kernel the directory holds into <program>.xclbin, where
# <program> is NAME, by default the directory's name without `.tessera` (`tessera cc -o
# app` writes app.tessera/, so app.xclbin): the runtime finds the program's xclbin by the
# executable's name, loads it once and runs every kernel from it. Kernel names hash the
# source file's path and the region (tessera_<file stem>_<path hash>_l<line>_r<index>_<IR
# hash>), so a build script never spells them; every kernel is rebuilt when a DEPENDS
# changes. PER_KERNEL links each kernel into an xclbin of its own (<kernel>.xclbin), for
# kernels that do not fit on the device together; the outputs are then unknown here and
# the stamp file <OUTPUT_DIR>/<TARGET>/<name>.stamp stands for them. MANIFEST builds one
# kernel into its own <kernel>.xclbin (what the manifest names), as PER_KERNEL does.
#
# Inputs (cache variables):
#   TESSERA_EXECUTABLE         the `tessera` driver (default: found on PATH, in
#                              <tessera>/target/release or, installed, <prefix>/bin;
#                              find_package(Tessera) sets it to <prefix>/bin/tessera)
#   TESSERA_BITSTREAM_DRY_RUN  ON: run `tessera bitstream --dry-run` (prints the v++
#                              commands, writes the .cfg; needs no Vitis). Its
#                              output is then the .cfg instead of the .xclbin.
#
# Without the dry run, configuration stops if v++ cannot be found (on PATH or in
# $XILINX_VITIS/bin): source Vitis' settings64.sh in the shell that runs cmake and the
# build. Requires CMake 3.19 to read the manifest's `xclbin` field (older versions
# derive the name <kernel>.xclbin from the file name, which is what the manifest says).

get_filename_component(_tessera_bitstream_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

find_program(TESSERA_EXECUTABLE tessera
             HINTS "${_tessera_bitstream_root}/target/release"
                   "${CMAKE_CURRENT_LIST_DIR}/../../../bin"  # installed: <prefix>/lib/cmake/Tessera
             DOC "The tessera driver (tessera cc, tessera bitstream)")

option(TESSERA_BITSTREAM_DRY_RUN
       "tessera_add_bitstream: only print the v++ commands and write the connectivity configs" OFF)

function(tessera_add_bitstream name)
  cmake_parse_arguments(PARSE_ARGV 1 TB "ALL;PER_KERNEL"
                        "MANIFEST;KERNELS;PLATFORM;TARGET;CLOCK_MHZ;CLOCK_KIND;OUTPUT_DIR;NAME" "MEMORY;DEPENDS")
  set(_ctx "tessera_add_bitstream(${name})")
  if(TB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${_ctx}: unknown arguments: ${TB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TB_MANIFEST AND NOT TB_KERNELS)
    message(FATAL_ERROR "${_ctx}: KERNELS <output>.tessera or MANIFEST <dir>/<kernel>.manifest.json is required")
  endif()
  if(TB_MANIFEST AND TB_KERNELS)
    message(FATAL_ERROR "${_ctx}: give KERNELS or MANIFEST, not both")
  endif()
  if(TB_NAME AND (TB_PER_KERNEL OR TB_MANIFEST))
    message(FATAL_ERROR "${_ctx}: NAME names the program's xclbin of KERNELS; PER_KERNEL and MANIFEST "
                        "build each kernel's own <kernel>.xclbin")
  endif()
  if(TB_NAME AND NOT TB_NAME MATCHES "^[A-Za-z0-9_+][A-Za-z0-9_.+-]*$")
    message(FATAL_ERROR "${_ctx}: NAME `${TB_NAME}` cannot name <NAME>.xclbin: use letters, digits and _ . + -")
  endif()
  if(NOT TB_PLATFORM)
    message(FATAL_ERROR "${_ctx}: PLATFORM <file.xpfm | platform name> is required "
                        "(e.g. xilinx_u250_gen3x16_xdma_4_1_202210_1, or your VCU118 platform's .xpfm)")
  endif()
  if(NOT TB_TARGET)
    set(TB_TARGET hw)
  endif()
  if(NOT TB_TARGET MATCHES "^(sw_emu|hw_emu|hw)$")
    message(FATAL_ERROR "${_ctx}: TARGET must be sw_emu, hw_emu or hw, not `${TB_TARGET}`")
  endif()
  if(TB_CLOCK_KIND AND NOT TB_CLOCK_KIND MATCHES "^(scalable|fixed)$")
    message(FATAL_ERROR "${_ctx}: CLOCK_KIND must be scalable or fixed, not `${TB_CLOCK_KIND}`")
  endif()
  if(NOT TB_OUTPUT_DIR)
    set(TB_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/bitstreams")
  endif()
  get_filename_component(_out "${TB_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(TB_KERNELS)
    # Every kernel of a `tessera cc` output directory.
    get_filename_component(_input "${TB_KERNELS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(_kernel "kernels of ${TB_KERNELS}")
    set(_depends "")
    if(NOT TB_PER_KERNEL)
      # The program's xclbin: NAME, or the directory's name without .tessera.
      set(_program "${TB_NAME}")
      if(NOT _program)
        get_filename_component(_program "${_input}" NAME)
        string(REGEX REPLACE "\\.tessera$" "" _program "${_program}")
      endif()
      set(_kernel "${_program}.xclbin: kernels of ${TB_KERNELS}")
    endif()
  else()
    get_filename_component(_manifest "${TB_MANIFEST}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(_input "${_manifest}")

    # <kernel>.manifest.json -> <kernel>, its source and (the manifest's) xclbin name.
    get_filename_component(_file "${_manifest}" NAME)
    get_filename_component(_kdir "${_manifest}" DIRECTORY)
    if(NOT _file MATCHES "^(.+)\\.manifest\\.json$")
      message(FATAL_ERROR "${_ctx}: MANIFEST must be a <kernel>.manifest.json file, not `${_file}`")
    endif()
    set(_kernel "${CMAKE_MATCH_1}")
    set(_xclbin "${_kernel}.xclbin")
    if(EXISTS "${_manifest}" AND NOT CMAKE_VERSION VERSION_LESS 3.19)
      file(READ "${_manifest}" _json)
      string(JSON _x ERROR_VARIABLE _err GET "${_json}" xclbin)
      if(NOT _err AND _x)
        set(_xclbin "${_x}")
      endif()
    endif()
    set(_depends "${_manifest}" "${_kdir}/${_kernel}.cpp")
  endif()

  if(NOT TESSERA_EXECUTABLE)
    message(FATAL_ERROR "${_ctx}: the `tessera` driver was not found: run `make build` in the "
                        "Tessera checkout (it writes target/release/tessera), put it on PATH, or "
                        "set -DTESSERA_EXECUTABLE=/path/to/tessera")
  endif()

  # A platform given as a path must exist (a bare name is looked up by tessera/v++ in
  # $PLATFORM_REPO_PATHS and /opt/xilinx/platforms).
  set(_platform "${TB_PLATFORM}")
  if(_platform MATCHES "/" OR _platform MATCHES "\\.xpfm$")
    get_filename_component(_platform "${_platform}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT TESSERA_BITSTREAM_DRY_RUN AND NOT EXISTS "${_platform}")
      message(FATAL_ERROR "${_ctx}: platform file ${_platform} does not exist. Alveo platforms "
                          "install to /opt/xilinx/platforms/<name>/<name>.xpfm; a VCU118 needs a "
                          "custom platform (see bitstreams/README.md).")
    endif()
  endif()

  set(_dry "")
  set(_stamp "")
  set(_naming --per-kernel)
  if(TB_KERNELS AND TB_PER_KERNEL)
    # The names of the outputs are not known here: a stamp file stands for them.
    set(_output "${_out}/${TB_TARGET}/${name}.stamp")
    set(_stamp COMMAND "${CMAKE_COMMAND}" -E touch "${_output}")
  elseif(TB_KERNELS)
    set(_naming --name "${_program}")
    set(_xclbin "${_program}.xclbin")
    if(TESSERA_BITSTREAM_DRY_RUN)
      set(_output "${_out}/${TB_TARGET}/${_program}.cfg")
    else()
      set(_output "${_out}/${TB_TARGET}/${_xclbin}")
    endif()
  elseif(TESSERA_BITSTREAM_DRY_RUN)
    set(_output "${_out}/${TB_TARGET}/${_kernel}.cfg")
  else()
    set(_output "${_out}/${TB_TARGET}/${_xclbin}")
  endif()
  if(TESSERA_BITSTREAM_DRY_RUN)
    set(_dry --dry-run)
  else()
    find_program(VPP v++ HINTS "$ENV{XILINX_VITIS}/bin")
    if(NOT VPP)
      message(FATAL_ERROR
        "${_ctx}: AMD Vitis not found: no `v++` on PATH or in $XILINX_VITIS/bin.\n"
        "Bitstreams are built with AMD Vitis 2023.x/2024.x, which is not part of Tessera. "
        "Install it, then in the shell that runs cmake and the build:\n"
        "    source <Vitis install dir>/settings64.sh   # e.g. /tools/Xilinx/Vitis/2023.2/settings64.sh\n"
        "    source /opt/xilinx/xrt/setup.sh\n"
        "and configure again, or configure with "
        "-DTESSERA_BITSTREAM_DRY_RUN=ON to only print the v++ commands and write the connectivity configs.")
    endif()
  endif()

  set(_args bitstream "${_input}" ${_naming} --platform "${_platform}" --target ${TB_TARGET} --output "${_out}")
  foreach(_m IN LISTS TB_MEMORY)
    list(APPEND _args "--memory=${_m}")
  endforeach()
  if(TB_CLOCK_MHZ)
    list(APPEND _args --clock-mhz ${TB_CLOCK_MHZ})
  endif()
  if(TB_CLOCK_KIND)
    list(APPEND _args --clock-kind ${TB_CLOCK_KIND})
  endif()
  list(APPEND _args ${_dry})

  if(TB_TARGET STREQUAL "hw" AND NOT TESSERA_BITSTREAM_DRY_RUN)
    set(_note " - Vitis HLS + Vivado: hours per kernel for large tiles")
  else()
    set(_note "")
  endif()
  add_custom_command(
    OUTPUT "${_output}"
    COMMAND "${TESSERA_EXECUTABLE}" ${_args}
    ${_stamp}
    DEPENDS ${_depends} ${TB_DEPENDS}
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}"
    COMMENT "tessera bitstream: ${_kernel} (${TB_TARGET})${_note}"
    USES_TERMINAL
    VERBATIM)
  if(TB_ALL)
    add_custom_target(${name} ALL DEPENDS "${_output}")
  else()
    add_custom_target(${name} DEPENDS "${_output}")
  endif()
  if(TB_KERNELS AND TB_PER_KERNEL)
    set(${name}_XCLBIN "" PARENT_SCOPE)
  else()
    set(${name}_XCLBIN "${_out}/${TB_TARGET}/${_xclbin}" PARENT_SCOPE)
  endif()
  set(${name}_BITSTREAM_DIR "${_out}/${TB_TARGET}" PARENT_SCOPE)
endfunction()
