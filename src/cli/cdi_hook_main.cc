// pinpoint-cdi-hook: the OCI hook of pinpoint's CDI specs (cli/cdi.h, docs/containers.md).
#include <iostream>

#include "cli/cdi.h"

int main(int argc, char** argv) { return pinpoint::cli::RunCdiHook(argc, argv, std::cin, std::cerr); }
