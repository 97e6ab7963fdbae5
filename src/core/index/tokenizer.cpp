#include "index/tokenizer.h"

namespace scipis {

Tokenizer::Tokenizer(const unsigned char delimiter[256]) {
  for (int b = 0; b < 256; b++) {
    is_tok_[b] = delimiter[b] ? 0 : 1;
    lower_[b] = (b >= 'A' && b <= 'Z') ? static_cast<unsigned char>(b + 32)
                                       : static_cast<unsigned char>(b);
  }
}

}  // namespace scipis
