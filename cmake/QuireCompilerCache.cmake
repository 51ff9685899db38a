# Use ccache when it is installed: rebuilds after a branch switch or a clean
# checkout in CI become cheap.
find_program(QUIRE_CCACHE ccache)
if(QUIRE_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${QUIRE_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${QUIRE_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${QUIRE_CCACHE})
endif()
