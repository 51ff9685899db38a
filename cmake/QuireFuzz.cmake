# QUIRE_FUZZ=ON builds the libFuzzer targets of fuzz/ (scripts/fuzz.sh).
# Every C/C++ translation unit gets libFuzzer's coverage instrumentation and
# AddressSanitizer with UndefinedBehaviorSanitizer, so that the fuzzer sees
# the branches of the libraries under test and any memory error or undefined
# behaviour in them ends the run; only the fuzz targets link libFuzzer itself.
option(QUIRE_FUZZ "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

if(QUIRE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "QUIRE_FUZZ needs clang (libFuzzer), but the C++ compiler is ${CMAKE_CXX_COMPILER_ID}. "
      "Configure a separate build directory with CC=clang CXX=clang++, as scripts/fuzz.sh does.")
  endif()
  if(QUIRE_SANITIZE)
    message(FATAL_ERROR "QUIRE_FUZZ brings its own sanitizers; leave QUIRE_SANITIZE off")
  endif()
  set(QUIRE_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined
                       -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${QUIRE_FUZZ_FLAGS}>")
  add_link_options(-fsanitize=address,undefined)
endif()
