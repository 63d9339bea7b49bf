// bench: docs/protocol.md's program for the C++20 coroutine floor.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    fl::Parsed p = fl::parse_args(args);
    if (p.status == fl::Parse::help) {
        std::fputs(fl::usage, stdout);
        return 0;
    }
    if (p.status == fl::Parse::error) {
        for (char& c : p.error)
            if (static_cast<unsigned char>(c) < 0x20) c = '?';  // one line, whatever the input
        std::fprintf(stderr, "bench: %s\n", p.error.c_str());
        return 2;
    }
    try {
        std::string line = fl::run(p.cfg);
        std::printf("%s\n", line.c_str());
    } catch (const std::bad_alloc&) {
        std::fputs("bench: out of memory\n", stderr);
        return 1;
    }
    return 0;
}
