# The CPU kernels' inner loops are written over small fixed-size arrays of
# vector registers (rows of a batch, words of a packed block) that only
# GCC's -O3 unrolls completely; at the -O2 of RelWithDebInfo and of the
# package they stay loops over arrays in memory: the integer EXL2 product of
# three and four input rows (a decode step of a few jobs) ran at 8.5 G
# multiply-adds/s on one thread at -O2 and at 14.4 at -O3 (the 96M
# benchmark shape's MLP weights). So the kernel libraries are built with -O3
# in every optimized build, whatever the rest of the project uses. Not under
# the sanitizers, which choose -O1 for their compile time, nor in the fuzz
# build.
function(quire_target_hot_loops target)
  if(QUIRE_SANITIZE OR QUIRE_FUZZ)
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-O3>")
  endif()
endfunction()

# The same for chosen sources of a library whose other code gains nothing
# from -O3 (and where GCC 12's -O3 warns falsely about string copies).
function(quire_sources_hot_loops)
  if(QUIRE_SANITIZE OR QUIRE_FUZZ)
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS
      "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-O3>")
  endif()
endfunction()
