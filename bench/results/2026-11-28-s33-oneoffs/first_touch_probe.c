#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int c,char**v){size_t sz=(size_t)1<<30;int huge=c>1;
for(int r=0;r<3;r++){char*p=mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
madvise(p,sz,huge?MADV_HUGEPAGE:MADV_NOHUGEPAGE);double t=now();for(size_t i=0;i<sz;i+=4096)p[i]=1;double t1=now();
memset(p,0,sz);double t2=now();printf("touch %.3f s (%.2f GB/s)  memset %.3f s\n",t1-t,1.0/(t1-t),t2-t1);munmap(p,sz);}}
