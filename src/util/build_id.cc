#include "util/build_id.h"

#include <elf.h>
#include <fmt/format.h>
#include <link.h>

#include <cstring>

namespace migserve {
namespace {

// Reads the NT_GNU_BUILD_ID note of the first object dl_iterate_phdr
// reports, which is the main program.
int FindBuildId(dl_phdr_info* info, size_t, void* data) {
  auto* id = static_cast<std::string*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const char* at =
        reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr);
    const char* end = at + segment.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const char* name = at + sizeof note;
      const char* desc = name + ((note.n_namesz + 3) & ~3u);
      const char* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        for (unsigned b = 0; b < note.n_descsz; ++b) {
          *id += fmt::format("{:02x}", static_cast<unsigned char>(desc[b]));
        }
        return 1;
      }
      at = next;
    }
  }
  return 1;  // only the main program
}

}  // namespace

std::string BuildId() {
  static const std::string id = [] {
    std::string found;
    dl_iterate_phdr(FindBuildId, &found);
    return found;
  }();
  return id;
}

}  // namespace migserve
