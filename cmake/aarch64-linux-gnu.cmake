# aarch64-linux-gnu.cmake — CMake toolchain file: build headroom for linux/arm64 on a Debian amd64
# machine, with Debian's cross compiler and Debian's arm64 builds of the libraries (multiarch).
#
#   cmake -S . -B build/arm64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DHR_TESTS=OFF
#   ninja -C build/arm64 headroom
#
# Needs what scripts/setup.sh installs: gcc-aarch64-linux-gnu, `dpkg --add-architecture arm64`
# and the -dev:arm64 packages (libcurl4-gnutls-dev, libmicrohttpd-dev, libfyaml-dev,
# libgnutls28-dev, libyyjson-dev). HR_TESTS=OFF: the tests, benchmarks and test tools are not
# built (no cmocka for arm64, and nothing built for arm64 can run here but under qemu-user).
# What it builds runs here under user-mode emulation only: qemu-aarch64 -L ROOT BINARY, ROOT a tree
# holding the arm64 interpreter and libraries (scripts/release/image.sh --arch arm64 makes one).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HR_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${HR_TRIPLET}-gcc)
set(CMAKE_AR ${HR_TRIPLET}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${HR_TRIPLET}-ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${HR_TRIPLET}-strip CACHE FILEPATH "")

# Headers and libraries: the cross compiler's own sysroot (/usr/aarch64-linux-gnu, libc6-dev-arm64-cross)
# and the multiarch directories of the arm64 packages (/usr/include/aarch64-linux-gnu,
# /usr/lib/aarch64-linux-gnu, /lib/aarch64-linux-gnu), which gcc searches by itself; architecture-
# independent headers are in /usr/include. CMake looks for libraries and headers in these roots
# only, and for programs (pkg-config, git) on this machine only.
set(CMAKE_FIND_ROOT_PATH /usr/${HR_TRIPLET} /)
set(CMAKE_LIBRARY_ARCHITECTURE ${HR_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 packages' .pc files only (never amd64's /usr/lib/x86_64-linux-gnu/
# pkgconfig); the paths in them are the multiarch ones, valid as they are (no sysroot prefix).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${HR_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# Anything CMake would run of what it builds: under user-mode qemu (qemu-user; no binfmt handler
# is registered, ever), on the arm64 interpreter and libraries installed here (libc6:arm64's
# /lib/ld-linux-aarch64.so.1 with its own libc: not the cross sysroot's, whose libc may be of
# another build).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
