#include <chrono>
#include <cstdio>
#include <string>
#include "util/crc32c.h"
int main(){ std::string s(4<<20,'x'); for(size_t i=0;i<s.size();i++) s[i]=char(i*2654435761u>>13);
 for (size_t n : {size_t(256), size_t(2048), size_t(4<<20)}) { uint32_t c=0; auto t0=std::chrono::steady_clock::now(); size_t tot=0; while(tot < (size_t(1)<<30)) { for(size_t o=0;o+n<=s.size() && tot < (size_t(1)<<30);o+=n){c=scipis::crc32c(s.data()+o,n,c); tot+=n;} }
 double sec=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count(); printf("n=%zu %.2f GB/s %x\n", n, tot/sec/1e9, c);} }
