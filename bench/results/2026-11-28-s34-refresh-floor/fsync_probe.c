#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
static double cpu(){struct rusage u;getrusage(RUSAGE_SELF,&u);return u.ru_utime.tv_sec+u.ru_stime.tv_sec+(u.ru_utime.tv_usec+u.ru_stime.tv_usec)*1e-6;}
int main(int argc,char**argv){
  char path[256]; snprintf(path,sizeof path,"%s/journal",argv[1]);
  int fd=open(path,O_WRONLY|O_CREAT|O_APPEND,0600); char buf[5000]; memset(buf,'x',sizeof buf);
  double c0=cpu(); for(int i=0;i<200;i++){ write(fd,buf,sizeof buf); fdatasync(fd);} double c1=cpu();
  printf("append+fdatasync: %.3f ms cpu each\n",(c1-c0)/200*1e3);
  /* the gen-dir style commit: mkdir, 2 files created+fsynced, dir fsyncs, manifest tmp+rename, rmdir old */
  c0=cpu();
  for(int i=0;i<200;i++){ char d[300],f[400]; snprintf(d,sizeof d,"%s/g%d",argv[1],i); mkdir(d,0700);
    for(int k=0;k<2;k++){ snprintf(f,sizeof f,"%s/f%d",d,k); int g=open(f,O_WRONLY|O_CREAT|O_TRUNC,0600); write(g,buf,k?263:4372); fsync(g); close(g);}
    int dd=open(d,O_RDONLY|O_DIRECTORY); fsync(dd); close(dd); int r=open(argv[1],O_RDONLY|O_DIRECTORY); fsync(r);
    snprintf(f,sizeof f,"%s/M.tmp",argv[1]); int g=open(f,O_WRONLY|O_CREAT|O_TRUNC,0600); write(g,buf,592); fsync(g); close(g);
    char m[300]; snprintf(m,sizeof m,"%s/M",argv[1]); rename(f,m); fsync(r); close(r);
    if(i>0){ snprintf(d,sizeof d,"%s/g%d",argv[1],i-1); for(int k=0;k<2;k++){snprintf(f,sizeof f,"%s/f%d",d,k); unlink(f);} rmdir(d);} }
  c1=cpu(); printf("gen-dir commit: %.3f ms cpu each\n",(c1-c0)/200*1e3);
  /* in-place two-slot: pwrite a slot + fdatasync, plus the record */
  c0=cpu(); int mf=open(path,O_WRONLY); for(int i=0;i<200;i++){ write(fd,buf,sizeof buf); fdatasync(fd); pwrite(mf,buf,592,(i&1)*4096); fdatasync(mf);} c1=cpu();
  printf("journal + slot: %.3f ms cpu each\n",(c1-c0)/200*1e3);
}
