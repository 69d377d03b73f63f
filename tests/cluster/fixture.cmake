# fixture.cmake — a test cluster (tests/cluster/cluster.sh) as a CTest fixture, and the tests that
# run on it. Included once from tests/e2e/CMakeLists.txt; bench/cluster/CMakeLists.txt uses the same
# functions for the benchmarks' CI-sized runs.
#
# hr_cluster(NAME VERSION DIR LABEL [REALNODE]): fixture NAME, a cluster of Kubernetes VERSION ("" = the pinned
#   one, versions.env K8S_VERSION) whose state (and, through its port base, every port) is DIR's.
#   With REALNODE, fixture NAME-realnode adds the real node to it.
# hr_cluster_test(CLUSTER TESTNAME LABEL COMMAND...): TESTNAME runs on CLUSTER with the suite's
#   environment. Its properties (locks, RUN_SERIAL) are set by the caller.
set(HR_CLUSTER_SH ${CMAKE_SOURCE_DIR}/tests/cluster/cluster.sh)

function(hr_cluster name version dir label)
  set(env "HEADROOM_CLUSTER_DIR=${dir}")
  if(version)
    list(APPEND env "HEADROOM_K8S_VERSION=${version}")
  endif()
  set_property(GLOBAL PROPERTY HR_CLUSTER_ENV_${name} "${env}")
  add_test(NAME ${name}_up COMMAND ${CMAKE_COMMAND} -E env ${env} ${HR_CLUSTER_SH} up)
  add_test(NAME ${name}_down COMMAND ${CMAKE_COMMAND} -E env ${env} ${HR_CLUSTER_SH} down)
  # 1800 s: on an empty cache `up` builds its version's control plane first (scripts/test.sh builds
  # them before, so there `up` takes seconds).
  set_tests_properties(${name}_up PROPERTIES FIXTURES_SETUP ${name} LABELS "${label}" TIMEOUT 1800)
  set_tests_properties(${name}_down PROPERTIES FIXTURES_CLEANUP ${name} LABELS "${label}" TIMEOUT 120)
  if(NOT "REALNODE" IN_LIST ARGN)
    return()
  endif()
  # The real node (kubelet, containerd, runc) is up only around the tests that ask for it; its
  # teardown checks that nothing it made is left (processes, cgroups, mounts, netns, sysctls).
  add_test(NAME ${name}_realnode_up COMMAND ${CMAKE_COMMAND} -E env ${env} ${HR_CLUSTER_SH} real-node up)
  add_test(NAME ${name}_realnode_down_clean COMMAND ${CMAKE_COMMAND} -E env ${env} sh -c
    "'${HR_CLUSTER_SH}' real-node down && '${HR_CLUSTER_SH}' real-node check-clean")
  set_tests_properties(${name}_realnode_up PROPERTIES FIXTURES_SETUP ${name}-realnode
    FIXTURES_REQUIRED ${name} LABELS "${label}" TIMEOUT 300 RESOURCE_LOCK ${name})
  set_tests_properties(${name}_realnode_down_clean PROPERTIES FIXTURES_CLEANUP ${name}-realnode
    FIXTURES_REQUIRED ${name} LABELS "${label}" TIMEOUT 120 RESOURCE_LOCK ${name})
endfunction()

function(hr_cluster_test cluster test label)
  get_property(env GLOBAL PROPERTY HR_CLUSTER_ENV_${cluster})
  list(APPEND env
    "KUBECONFIG=" # each script derives it from HEADROOM_CLUSTER_DIR
    "HEADROOM_BIN=${CMAKE_BINARY_DIR}/headroom"
    "PROMCHECK=${CMAKE_BINARY_DIR}/tests/promcheck"
    "FAULTPROXY=${CMAKE_BINARY_DIR}/tests/faultproxy"
    "HR_CLUSTER_SH=${HR_CLUSTER_SH}")
  add_test(NAME ${test} COMMAND ${ARGN})
  set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED ${cluster} LABELS "${label}"
    TIMEOUT 900 ENVIRONMENT "${env}")
endfunction()
