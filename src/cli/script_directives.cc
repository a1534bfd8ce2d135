#include "cli/script_directives.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <set>

#include "cli/usage.h"
#include "pinpoint/api_jobs.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

namespace {

// The words of one directive's rest: split at blanks, '...' and "..." quote, a word that begins
// with '#' ends the line (a comment).
std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// The rest of `line` after the directive `tag` ("#SBATCH"), or nullopt when it is not one.
std::optional<std::string_view> After(std::string_view line, std::string_view tag) {
  if (line.substr(0, tag.size()) != tag) return std::nullopt;
  std::string_view rest = line.substr(tag.size());
  if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t') return std::nullopt;
  return rest;
}

// Whether `text` is a count: digits, at most 6.
bool IsCount(const std::string& text) {
  return !text.empty() && text.size() <= 6 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<std::string> ParseDirectives(std::string_view text) {
  std::vector<std::string> words;
  for (DirectiveWord& w : ParseDirectiveWords(text)) words.push_back(std::move(w.word));
  return words;
}

std::vector<DirectiveWord> ParseDirectiveWords(std::string_view text) {
  std::vector<DirectiveWord> sbatch, own;
  size_t at = 0;
  int number = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (++number == 1 && line.substr(0, 2) == "#!") continue;
    size_t lead = line.find_first_not_of(" \t\r");
    if (lead == std::string_view::npos) continue;  // blank
    line = line.substr(lead);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    if (line[0] != '#') break;  // the first command: sbatch reads no further
    if (auto rest = After(line, "#SBATCH")) {
      for (auto& w : Words(*rest)) sbatch.push_back({std::move(w), number});
    } else if (auto mine = After(line, "#PINPOINT")) {
      for (auto& w : Words(*mine)) own.push_back({std::move(w), number});
    }
  }
  sbatch.insert(sbatch.end(), own.begin(), own.end());
  return sbatch;
}

std::optional<std::string> ScriptFile(const std::string& word, const std::string& cwd,
                                      std::string* text) {
  if (word.empty()) return std::nullopt;
  std::string path = word.find('/') != std::string::npos ? word : cwd + "/" + word;
  if (path[0] != '/') path = cwd + "/" + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // The head alone, whatever the file's size; never blocking (O_NONBLOCK, should it have become a
  // FIFO since the stat).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string head(kScriptReadBytes, '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  if (head.rfind("#!", 0) != 0) return std::nullopt;
  if (text != nullptr) *text = std::move(head);
  return path;
}

std::optional<std::string> GresGpus(const std::string& value, std::vector<std::string>* others) {
  int count = 0;
  std::string type;
  bool gpu = false;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = std::min(value.find(',', start), value.size());
    std::string entry = value.substr(start, comma - start);
    start = comma + 1;
    entry = entry.substr(0, entry.find('('));  // "(S:0-1)": the sockets, one node has them all
    std::vector<std::string> parts;
    for (size_t at = 0; at <= entry.size();) {
      size_t colon = std::min(entry.find(':', at), entry.size());
      parts.push_back(entry.substr(at, colon - at));
      at = colon + 1;
    }
    if (parts[0] != "gpu") {
      if (!entry.empty()) others->push_back(entry);
      continue;
    }
    if (parts.size() > 3) return std::nullopt;
    std::string n = parts.size() == 1 ? "1" : parts.back();
    std::string t = parts.size() == 3 ? parts[1] : "";
    if (parts.size() == 2 && !IsCount(n)) t = n, n = "1";  // gpu:TYPE
    if (!IsCount(n) || (parts.size() == 3 && t.empty())) return std::nullopt;
    count += std::stoi(n);
    if (!t.empty()) type = type.empty() || type == t ? t : "";
    gpu = true;
  }
  if (!gpu) return std::nullopt;
  return (type.empty() ? "" : type + ":") + std::to_string(count);
}

std::vector<std::string> DirectiveOptions(
    const CLI::App& submit, const std::vector<std::string>& directives, const std::string& script,
    std::vector<std::string>* warnings, std::vector<size_t>* from, const std::vector<int>* lines) {
  std::vector<std::string> out;
  std::vector<size_t> sources;
  auto where = [&](size_t i) {
    std::string place = EscapeForTerminal(script);
    if (lines != nullptr && i < lines->size()) place += ":" + std::to_string((*lines)[i]);
    return "pinpoint: " + place + ": directive ";
  };
  auto warn = [&](size_t i, const std::string& what) {
    warnings->push_back(where(i) + EscapeForTerminal(what) +
                        " is not an option of pinpoint submit; ignored");
  };
  for (size_t i = 0; i < directives.size(); ++i) {
    std::string word = directives[i];
    size_t at = i;
    if (!LooksLikeOption(word)) {
      warn(at, word);
      continue;
    }
    std::string name = word.substr(0, word.find('='));
    bool attached = word.find('=') != std::string::npos;
    if (name == "--gres") {
      std::string value = attached ? word.substr(word.find('=') + 1)
                                   : (i + 1 < directives.size() ? directives[++i] : "");
      std::vector<std::string> others;
      auto gpus = GresGpus(value, &others);
      if (gpus) {
        out.push_back("--gpus");
        out.push_back(*gpus);
        sources.insert(sources.end(), 2, i);
      }
      for (const std::string& other : others)
        warnings->push_back(where(at) + "--gres " + EscapeForTerminal(other) +
                            ": pinpoint's node has no such resource; ignored");
      if (!gpus && others.empty()) warn(at, "--gres=" + value);
      continue;
    }
    const CLI::Option* option = FindOption(submit, word);
    if (option == nullptr && (option = FindByPrefix(submit, word)) != nullptr)
      word = "--" + option->get_lnames().front() + (attached ? word.substr(word.find('=')) : "");
    bool refused = option != nullptr && option->get_description().rfind("Slurm's; refused", 0) == 0;
    if (option == nullptr || refused || option->get_positional()) {
      // Its value, when it has one apart: the next word, unless that is an option.
      std::string shown = word;
      if (!attached && i + 1 < directives.size() && !LooksLikeOption(directives[i + 1]))
        shown += " " + directives[++i];
      warn(at, shown);
      continue;
    }
    size_t values = ValueWords(*option, word);
    if (i + values >= directives.size()) {  // its value missing: never the command line's words
      warnings->push_back(where(at) + EscapeForTerminal(word) + " has no value; ignored");
      break;
    }
    out.push_back(word);
    sources.push_back(i);
    for (; values > 0; --values) {
      out.push_back(directives[++i]);
      sources.push_back(i);
    }
  }
  if (from != nullptr) *from = std::move(sources);
  return out;
}

namespace {

// The script as a person typed it, for a place: escaped for a terminal, its last component alone
// where the whole would be longer than a place may be (kMaxScriptPlaceBytes).
std::string ShownScript(const std::string& script) {
  constexpr size_t kMost = kMaxScriptPlaceBytes - 16;  // and ":LINE"
  std::string shown = EscapeForTerminal(script);
  if (shown.size() <= kMost) return shown;
  shown = EscapeForTerminal(script.substr(script.find_last_of('/') + 1));
  return shown.size() <= kMost ? shown : "the script";
}

// The options of `options` (DirectiveOptions's, each word's directive in `from`) that `typed`
// (the command line's) does not give, with the place of each one's last directive.
std::vector<ScriptOption> ScriptOptions(const CLI::App& submit,
                                        const std::vector<std::string>& options,
                                        const std::vector<size_t>& from,
                                        const std::vector<DirectiveWord>& directives,
                                        const std::set<const CLI::Option*>& typed,
                                        const std::string& script) {
  std::vector<ScriptOption> out;
  for (size_t i = 0; i < options.size(); ++i) {
    const CLI::Option* option = FindOption(submit, options[i]);
    if (option == nullptr) continue;
    std::string place = ShownScript(script) + ":" + std::to_string(directives.at(from.at(i)).line);
    i += ValueWords(*option, options[i]);
    if (typed.count(option) > 0) continue;  // the command line's value wins
    auto seen = std::find_if(out.begin(), out.end(),
                             [&](const ScriptOption& o) { return o.option == option; });
    if (seen != out.end())
      seen->place = std::move(place);  // the last value given wins
    else
      out.push_back({option, std::move(place)});
  }
  return out;
}

}  // namespace

void ApplyScript(const CLI::App& app, std::vector<std::string>& args, size_t index,
                 std::vector<std::string>* warnings, std::vector<ScriptOption>* from_script) {
  const CLI::App* submit = app.get_subcommand("submit");
  std::set<const CLI::Option*> typed;
  size_t command = args.size();
  for (size_t i = index + 1; i < args.size(); ++i) {
    if (args[i] == "--") {
      command = i + 1;
      break;
    }
    if (!LooksLikeOption(args[i])) {
      command = i;
      break;
    }
    const CLI::Option* option = FindOption(*submit, args[i]);
    if (option != nullptr) typed.insert(option);
    if (option == nullptr) option = FindOption(app, args[i]);
    if (option != nullptr) i += ValueWords(*option, args[i]);
  }
  if (command >= args.size()) return;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return;
  std::string text;
  auto script = ScriptFile(args[command], cwd, &text);
  if (!script) return;
  std::string as_typed = args[command];
  if (as_typed.find('/') == std::string::npos) args[command] = *script;  // as sbatch finds it
  std::vector<DirectiveWord> directives = ParseDirectiveWords(text);
  std::vector<std::string> words;
  std::vector<int> lines;
  for (const DirectiveWord& d : directives) words.push_back(d.word), lines.push_back(d.line);
  std::vector<size_t> from;
  std::vector<std::string> options =
      DirectiveOptions(*submit, words, as_typed, warnings, &from, &lines);
  if (from_script != nullptr)
    *from_script = ScriptOptions(*submit, options, from, directives, typed, as_typed);
  args.insert(args.begin() + static_cast<std::ptrdiff_t>(index) + 1, options.begin(),
              options.end());
}

}  // namespace pinpoint::cli
