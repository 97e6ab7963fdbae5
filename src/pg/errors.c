/* Turns engine errors into PostgreSQL errors, after the C++ frames are gone. */
#include "scipis_pg.h"

#include "utils/elog.h"

static int
sqlstate_of(scipis_status code)
{
	switch (code)
	{
		case SCIPIS_E_INVALID:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case SCIPIS_E_IO:
			return ERRCODE_IO_ERROR;
		case SCIPIS_E_CORRUPT:
			return ERRCODE_DATA_CORRUPTED;
		case SCIPIS_E_CANCELED:
			return ERRCODE_QUERY_CANCELED;
		case SCIPIS_E_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case SCIPIS_E_NOT_INDEXED:
			return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
		case SCIPIS_OK:
		case SCIPIS_E_INTERNAL:
			break;
	}
	return ERRCODE_INTERNAL_ERROR;
}

void
scipis_raise(const scipis_error *err)
{
	ereport(ERROR,
			(errcode(sqlstate_of(err->code)),
			 errmsg("%s", err->message)));
	pg_unreachable();
}
