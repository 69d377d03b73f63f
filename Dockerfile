# kube-headroom runtime image (design §13): the `headroom` binary on
# debian:bookworm-slim with only its runtime libraries, running as 65532.
#
#   docker build -t ghcr.io/kube-headroom/headroom:0.1.0 .
#
# Built the same way as scripts/setup.sh + CMake build it for the tests, with
# the build-only packages (no clang, valgrind or cmocka) and yyjson from
# Debian 13, pinned low, since bookworm does not ship it. The runtime stage
# takes yyjson's shared library from the build stage instead of adding the
# trixie source a second time.
#
# Not built on the project's development machine (it has no Docker engine):
# see the closing notes of the session that added it.
FROM debian:bookworm AS build
RUN printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      > /etc/apt/sources.list.d/trixie.sources \
 && printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n' > /etc/apt/preferences.d/trixie \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake ninja-build pkg-config gcc libc6-dev git ca-certificates \
      libcurl4-openssl-dev libssl-dev libmicrohttpd-dev libfyaml-dev libcmocka-dev \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t trixie libyyjson-dev
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHR_WERROR=OFF >/dev/null \
 && ninja -C /build headroom \
 && strip /build/headroom \
 && /build/headroom version

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libcurl4 libmicrohttpd12 libfyaml0 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/lib/x86_64-linux-gnu/libyyjson.so.0* /usr/lib/x86_64-linux-gnu/
COPY --from=build /build/headroom /usr/bin/headroom
USER 65532:65532
ENTRYPOINT ["/usr/bin/headroom"]
CMD ["run", "--leader-elect"]
