# QUIRE_SANITIZE=ON builds every host C/C++ translation unit with AddressSanitizer
# and UndefinedBehaviorSanitizer. Device code is left alone: nvcc cannot
# instrument it, and nothing CUDA runs where the sanitized tests run.
option(QUIRE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(QUIRE_SANITIZE)
  set(QUIRE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                            -fno-omit-frame-pointer)
  # -O1 and line tables only (-g1), after the build type's -O2 -g: the
  # sanitizers' instrumentation makes GCC's -O2 and full debug information
  # two to four times slower to compile (the EXL2 kernels took nearly four
  # minutes each), while -O1 still inlines, and line tables are all a
  # sanitizer's stack trace needs.
  list(APPEND QUIRE_SANITIZER_FLAGS -O1 -g1)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${QUIRE_SANITIZER_FLAGS}>")
  add_link_options(-fsanitize=address,undefined)
endif()
