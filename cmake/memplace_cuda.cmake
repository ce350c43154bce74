# memplace_enable_cuda()
#   Enables the CUDA language (nvcc) in the calling directory (and those below it) when a CUDA
#   compiler is found; sets MEMPLACE_CUDA_FOUND (TRUE/FALSE) in the caller's scope. A macro,
#   not a function: enable_language() must run at file scope. Called at the top level by the
#   GPU suite (MEMPLACE_GPU_TESTS), else by each directory that builds CUDA code.
#
#   nvcc compiles host code with its own host compiler, not with the project's clang++:
#   CMAKE_CUDA_HOST_COMPILER when given, else $CUDAHOSTCXX, else g++ when there is one (the
#   CUDA toolkit supports gcc as host compiler on Linux; clang-19 is newer than nvcc 13 accepts).
#   Architectures: CMAKE_CUDA_ARCHITECTURES, default 90 (Hopper).
#   CMake 3.25 does not know nvcc 13's C++20 flag; the project's C++20 asks for it, so it is
#   named here.
macro(memplace_enable_cuda)
  if(CMAKE_CUDA_COMPILER_LOADED)
    set(MEMPLACE_CUDA_FOUND TRUE)
  else()
    include(CheckLanguage)
    # check_language() leaves a normal variable CMAKE_CUDA_HOST_COMPILER (often empty) that
    # hides the cache entry: remember the user's choice first.
    set(memplace_user_cuda_host "$CACHE{CMAKE_CUDA_HOST_COMPILER}")
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      if(memplace_user_cuda_host)
        set(CMAKE_CUDA_HOST_COMPILER "${memplace_user_cuda_host}")
      elseif(DEFINED ENV{CUDAHOSTCXX})
        unset(CMAKE_CUDA_HOST_COMPILER)
      else()
        find_program(MEMPLACE_CUDA_HOST_CXX NAMES g++)
        if(MEMPLACE_CUDA_HOST_CXX)
          set(CMAKE_CUDA_HOST_COMPILER "${MEMPLACE_CUDA_HOST_CXX}")
        else()
          unset(CMAKE_CUDA_HOST_COMPILER)
        endif()
      endif()
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES 90)
      endif()
      enable_language(CUDA)
      set(MEMPLACE_CUDA_FOUND TRUE)
    else()
      set(MEMPLACE_CUDA_FOUND FALSE)
    endif()
  endif()
  if(MEMPLACE_CUDA_FOUND AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endmacro()
