# pinpoint-k8s, the kubelet device plugin (src/k8s, docs/kubernetes.md). It needs gRPC and
# protobuf (Debian 12: libgrpc++-dev, libprotobuf-dev, protobuf-compiler, protobuf-compiler-grpc;
# scripts/install-deps.sh build installs them).
#   PINPOINT_K8S=AUTO  build it where gRPC is found, else say so and go on (the default)
#   PINPOINT_K8S=ON    build it; a missing gRPC stops the configuration (`make test` and CI)
#   PINPOINT_K8S=OFF   do not build it
set(PINPOINT_K8S AUTO CACHE STRING "Build pinpoint-k8s, the kubelet device plugin: AUTO, ON or OFF")
set_property(CACHE PINPOINT_K8S PROPERTY STRINGS AUTO ON OFF)
if(PINPOINT_K8S STREQUAL "OFF")
  return()
endif()

# The plugin's pure policy (what it offers, what it prefers, what an allocation asks for): no
# gRPC, so the fuzz build has it too (fuzz/k8s_ids_fuzz.cc).
add_library(pp_k8s_policy STATIC ${PROJECT_SOURCE_DIR}/src/k8s/device/device_book.cc
                                 ${PROJECT_SOURCE_DIR}/src/k8s/device/allocation.cc)
target_include_directories(pp_k8s_policy PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(pp_k8s_policy PUBLIC pp_common)
if(PINPOINT_FUZZ AND NOT PINPOINT_TESTS)
  return()
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PINPOINT_GRPC QUIET IMPORTED_TARGET grpc++ protobuf)
endif()
find_program(PINPOINT_PROTOC protoc)
find_program(PINPOINT_GRPC_CPP_PLUGIN grpc_cpp_plugin)
if(NOT PINPOINT_GRPC_FOUND OR NOT PINPOINT_PROTOC OR NOT PINPOINT_GRPC_CPP_PLUGIN)
  set(why "pinpoint-k8s needs gRPC and protobuf: apt-get install libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc (or scripts/install-deps.sh build)")
  if(PINPOINT_K8S STREQUAL "ON")
    message(FATAL_ERROR "pinpoint: PINPOINT_K8S=ON, but ${why}")
  endif()
  message(STATUS "pinpoint: pinpoint-k8s is not built; ${why}")
  return()
endif()

# The v1beta1 stubs, generated into the build tree.
set(k8s_gen ${CMAKE_BINARY_DIR}/generated/k8s)
set(k8s_proto ${PROJECT_SOURCE_DIR}/src/k8s/deviceplugin/deviceplugin.proto)
set(k8s_gen_srcs ${k8s_gen}/deviceplugin.pb.cc ${k8s_gen}/deviceplugin.grpc.pb.cc)
set(k8s_gen_hdrs ${k8s_gen}/deviceplugin.pb.h ${k8s_gen}/deviceplugin.grpc.pb.h)
add_custom_command(
  OUTPUT ${k8s_gen_srcs} ${k8s_gen_hdrs}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${k8s_gen}
  COMMAND ${PINPOINT_PROTOC} -I ${PROJECT_SOURCE_DIR}/src/k8s/deviceplugin --cpp_out=${k8s_gen}
          --grpc_out=${k8s_gen} --plugin=protoc-gen-grpc=${PINPOINT_GRPC_CPP_PLUGIN} ${k8s_proto}
  DEPENDS ${k8s_proto}
  COMMENT "protoc: kubelet device plugin API v1beta1")
add_library(pp_k8s_proto STATIC ${k8s_gen_srcs})
target_include_directories(pp_k8s_proto SYSTEM PUBLIC ${k8s_gen})
target_compile_options(pp_k8s_proto PRIVATE -w)  # generated code: not ours to warn about
target_link_libraries(pp_k8s_proto PUBLIC PkgConfig::PINPOINT_GRPC)

# One room per concern (src/k8s/README.md): device/ (what a device is), deviceplugin/ (the
# kubelet's device-plugin API).
file(GLOB k8s_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/k8s/*/*.cc)
list(FILTER k8s_srcs EXCLUDE REGEX "(_test|/main|/stand_in_kubelet|/device_book|/allocation)\\.cc$")
add_library(pp_k8s STATIC ${k8s_srcs})
target_include_directories(pp_k8s PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
# pp_cdi: the CDI spec of a lease, as `pinpoint cdi` writes it (src/cdi/spec.h).
target_link_libraries(pp_k8s PUBLIC pp_k8s_policy pp_k8s_proto pp_cdi pp_client pp_common)

# Linked to the shared libstdc++: libgrpc++ is built against it (as pinpointd and cpp-httplib).
add_executable(pinpoint-k8s src/k8s/main.cc)
target_link_libraries(pinpoint-k8s PRIVATE pp_k8s CLI11::CLI11)

if(PINPOINT_TESTS)
  file(GLOB k8s_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/k8s/*/*_test.cc)
  # With the integration harness: one test reads a real pinpointd on a simulated node.
  add_executable(k8s_test ${k8s_tests} ${PROJECT_SOURCE_DIR}/src/k8s/deviceplugin/stand_in_kubelet.cc
                 ${PROJECT_SOURCE_DIR}/tests/integration/harness.cc)
  target_include_directories(k8s_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(k8s_test PRIVATE PINPOINT_BIN_DIR="$<TARGET_FILE_DIR:pinpointd>")
  target_link_libraries(k8s_test PRIVATE pp_k8s GTest::gtest GTest::gmock GTest::gtest_main)
  pinpoint_test_flags(k8s_test)
  add_dependencies(k8s_test pinpointd pinpoint-shim pinpoint-cdi-hook)
  gtest_discover_tests(k8s_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endif()
