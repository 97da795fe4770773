#pragma once
// A knowledge row's source as users see it: the URLs and `owner/repo@rev:path` citations they
// can open. The rows keep the full strings (how a fact was read: a stored copy's id, the
// developers' fact files); what the product prints or writes drops those parts.
#include <string>
#include <string_view>

namespace envlock::knowledge {

// "https://docs.nvidia.com/… (Table 3; read via stored copy, search-index file id 70889381901)"
// -> "https://docs.nvidia.com/… (Table 3)". "" when nothing public is left.
std::string public_source(std::string_view source);

}  // namespace envlock::knowledge
