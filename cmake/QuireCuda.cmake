# The CUDA backend is optional: it is compiled when a CUDA compiler is found and
# QUIRE_CUDA is not switched off. Everything else builds and runs without it.
include(CheckLanguage)
option(QUIRE_CUDA "Build the CUDA backend when a CUDA compiler is available" ON)

set(QUIRE_HAVE_CUDA OFF)
if(QUIRE_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # One architecture keeps CI builds short. Releases build "desktop": the
    # GPUs desktop users have, Turing through Blackwell, as machine code,
    # plus PTX of the newest so that later GPUs compile it at load. Any list
    # CMake understands works too (-DCMAKE_CUDA_ARCHITECTURES="80;86;89").
    set(QUIRE_CUDA_DESKTOP_ARCHITECTURES 75-real 80-real 86-real 89-real 90-real 100-real 120)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    elseif(CMAKE_CUDA_ARCHITECTURES STREQUAL "desktop")
      set(CMAKE_CUDA_ARCHITECTURES ${QUIRE_CUDA_DESKTOP_ARCHITECTURES} CACHE STRING
          "CUDA architectures (desktop: ${QUIRE_CUDA_DESKTOP_ARCHITECTURES})" FORCE)
    endif()
    # The same list as people read it ("sm_75, sm_80, ..., sm_120 (+PTX)"),
    # for messages: one string without semicolons, so it can travel in a
    # compile definition.
    set(QUIRE_CUDA_ARCHITECTURES_TEXT "")
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX REPLACE "-(real|virtual)$" "" number "${arch}")
      set(text "sm_${number}")
      if(arch MATCHES "-virtual$")
        set(text "PTX ${number}")
      elseif(NOT arch MATCHES "-real$")
        set(text "sm_${number} (+PTX)")
      endif()
      list(APPEND QUIRE_CUDA_ARCHITECTURES_TEXT "${text}")
    endforeach()
    list(JOIN QUIRE_CUDA_ARCHITECTURES_TEXT ", " QUIRE_CUDA_ARCHITECTURES_TEXT)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 does not know nvcc's C++20 flag; device code needs only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(QUIRE_HAVE_CUDA ON)
    message(STATUS "CUDA backend: enabled (${CMAKE_CUDA_COMPILER}, ${QUIRE_CUDA_ARCHITECTURES_TEXT})")
  else()
    message(STATUS "CUDA backend: no CUDA compiler found, skipped")
  endif()
else()
  message(STATUS "CUDA backend: disabled by QUIRE_CUDA=OFF")
endif()
