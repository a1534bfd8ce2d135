// pinpoint: the command-line client of pinpointd. See docs/cli.md.
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) { return pinpoint::cli::RunCli(argc, argv, std::cout, std::cerr); }
