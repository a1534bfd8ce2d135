// pinpoint-cdi-hook: the OCI hook of pinpoint's CDI specs (cdi_hook/hook.h, docs/containers.md).
#include <iostream>

#include "cdi_hook/hook.h"

int main(int argc, char** argv) { return pinpoint::cdi::RunHook(argc, argv, std::cin, std::cerr); }
