# The CUDA backend is optional: it is compiled when a CUDA compiler is found and
# QUIRE_CUDA is not switched off. Everything else builds and runs without it.
include(CheckLanguage)
option(QUIRE_CUDA "Build the CUDA backend when a CUDA compiler is available" ON)

set(QUIRE_HAVE_CUDA OFF)
if(QUIRE_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # One architecture keeps CI builds short; packagers pass a list
    # (e.g. -DCMAKE_CUDA_ARCHITECTURES="80;86;89;90").
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 does not know nvcc's C++20 flag; device code needs only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(QUIRE_HAVE_CUDA ON)
    message(STATUS "CUDA backend: enabled (${CMAKE_CUDA_COMPILER}, sm ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "CUDA backend: no CUDA compiler found, skipped")
  endif()
else()
  message(STATUS "CUDA backend: disabled by QUIRE_CUDA=OFF")
endif()
