# Cross-compiles migserve for linux/arm64 (GH200 and other Grace nodes)
# with Debian's aarch64 toolchain (g++-aarch64-linux-gnu) against a
# sysroot of Debian's arm64 packages, which tools/make-sysroot.sh extracts:
#   cmake -S . -B build-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#     -DMIGSERVE_SYSROOT=/path/to/sysroot
#   ninja -C build-arm64 migserve
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
if(NOT MIGSERVE_SYSROOT)
  message(FATAL_ERROR "-DMIGSERVE_SYSROOT=DIR: the arm64 sysroot "
                      "(tools/make-sysroot.sh)")
endif()
# try_compile projects see it too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MIGSERVE_SYSROOT)
set(CMAKE_SYSROOT ${MIGSERVE_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${MIGSERVE_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (CBC, cpp-httplib) reads the sysroot's arm64 files only.
set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${MIGSERVE_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    "${MIGSERVE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${MIGSERVE_SYSROOT}/usr/share/pkgconfig")
