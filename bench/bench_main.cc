// pinpoint-bench: what `pinpoint bench` runs. See docs/benchmarks.md.
#include <iostream>

#include "bench/driver/bench_cli.h"

int main(int argc, char** argv) {
  return pinpoint::bench::RunBenchCli(argc, argv, std::cout, std::cerr);
}
