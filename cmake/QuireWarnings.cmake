# Warnings are part of the build contract: every Quire target calls
# quire_target_warnings() and the code is kept free of them.
option(QUIRE_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)

function(quire_target_warnings target)
  set(flags -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
            -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough)
  if(QUIRE_WARNINGS_AS_ERRORS)
    list(APPEND flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${flags}>"
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
endfunction()
