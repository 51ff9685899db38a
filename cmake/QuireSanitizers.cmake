# QUIRE_SANITIZE=ON builds every host C/C++ translation unit with AddressSanitizer
# and UndefinedBehaviorSanitizer. Device code is left alone: nvcc cannot
# instrument it, and nothing CUDA runs where the sanitized tests run.
option(QUIRE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(QUIRE_SANITIZE)
  set(QUIRE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                            -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${QUIRE_SANITIZER_FLAGS}>")
  add_link_options(-fsanitize=address,undefined)
endif()
